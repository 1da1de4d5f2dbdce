internal import CRdKafka
import Logging
import Records
import Synchronization

/// A consumer's C callbacks (rebalance, statistics, errors, commit results) and the calls that
/// share their helpers. They run on the consumer's poll thread, inside `rd_kafka_consumer_poll`
/// or `rd_kafka_consumer_close`, find their ``ConsumerContext`` through the opaque pointer, and
/// report only by appending to it or completing a commit's waiter.
extension RDKafkaConfig {
    /// Installs the consumer's rebalance, statistics and error callbacks.
    func routeConsumerCallbacks() {
        rd_kafka_conf_set_rebalance_cb(pointer, rebalanceCallback)
        rd_kafka_conf_set_stats_cb(pointer, statisticsCallback)
        rd_kafka_conf_set_error_cb(pointer, errorCallback)
    }
}

/// The consumer context behind a handle's opaque pointer.
private func consumerContext(_ opaque: UnsafeMutableRawPointer?) -> ConsumerContext? {
    opaque.map { Unmanaged<ConsumerContext>.fromOpaque($0).takeUnretainedValue() }
}

/// Assignments are applied at once (after ``ConsumerContext/beforeAssign`` has run: when it holds
/// them, they are assigned paused and not reported); revocations are reported and applied later,
/// when the owner calls `releaseRevoked` (librdkafka allows the unassign after the callback
/// returns), except for lost partitions, held ones and while closing, which are given up at once.
/// The calls follow the group's protocol: incremental under `cooperative-sticky`, the whole
/// assignment under an eager assignor (`range`).
private func rebalanceCallback(
    _ handle: OpaquePointer?, _ error: rd_kafka_resp_err_t,
    _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, _ opaque: UnsafeMutableRawPointer?
) {
    guard let handle, let context = consumerContext(opaque) else { return }
    let changed = RDKafkaTopicPartitionList.partitions(in: partitions)
    switch error {
    case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
        let isClosing = context.isClosing.load(ordering: .acquiring)
        // Where the partitions start, when the member's own commits lie above the coordinator's
        // answer for some (nil: librdkafka asks the coordinator, as without a floor).
        let starts = isClosing || changed.isEmpty ? nil : raiseToFloor(handle, partitions, changed, context: context)
        var takesEffect = true
        if let beforeAssign = context.beforeAssign, !changed.isEmpty, !isClosing {
            takesEffect = beforeAssign(changed) { () throws(KafkaError) in
                if let starts { return starts }
                return try committedOffsets(handle, partitions)
            }
        }
        if isEager(handle) {
            let error = rd_kafka_assign(handle, partitions)
            if error != RD_KAFKA_RESP_ERR_NO_ERROR { context.append(.event(.error(KafkaError(error, message: "assigning")))) }
        } else if let failure = rd_kafka_incremental_assign(handle, partitions) {
            context.append(.event(.error(KafkaError(consuming: failure))))
        }
        if takesEffect {
            context.append(.event(.assigned(changed)))
        } else {
            // Held: assigned (so that the group's protocol goes on) but paused before any fetch
            // starts (librdkafka starts one only after asking for the committed offsets), and
            // never reported, so the owner takes nothing of them.
            context.held.withLock { $0.formUnion(changed) }
            _ = rd_kafka_pause_partitions(handle, partitions)
        }
    case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
        let held = context.takeHeld(among: changed)
        let reported = held.isEmpty ? changed : changed.filter { !held.contains($0) }
        let isClosing = context.isClosing.load(ordering: .acquiring)
        if rd_kafka_assignment_lost(handle) != 0 || isClosing {
            unassignPartitions(handle, partitions, context: context)
            if !reported.isEmpty {
                if !isClosing { context.onLost?(reported) }
                context.append(.event(.lost(reported)))
            }
        } else if reported.isEmpty {
            // Nothing for the owner to finish: held partitions only, or none (a member without
            // partitions: more members than partitions). Under an eager protocol librdkafka
            // waits for the unassign call before the member joins again, and the owner releases
            // no empty list: done here, at once.
            unassignPartitions(handle, partitions, context: context)
        } else {
            if !held.isEmpty, !isEager(handle) {
                // Cooperative: the held ones go now, the owner releases the rest (eager: all go
                // together when the owner releases).
                RDKafkaTopicPartitionList(Array(held)).withPointer { unassignPartitions(handle, $0, context: context) }
            }
            context.append(.event(.revoked(reported)))
        }
    default:
        context.append(.event(.error(KafkaError(error, message: "rebalance failed"))))
    }
}

/// Whether the group's rebalance protocol is eager (a `range` or `roundrobin` assignor): the
/// whole assignment is given up and handed out at each rebalance.
private func isEager(_ handle: OpaquePointer) -> Bool {
    guard let name = rd_kafka_rebalance_protocol(handle) else { return false }
    return String(cString: name) == "EAGER"
}

/// Gives up `partitions`: all of them under an eager protocol (`rd_kafka_assign(NULL)`), only
/// those under the cooperative one.
private func unassignPartitions(
    _ handle: OpaquePointer, _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, context: ConsumerContext
) {
    if isEager(handle) {
        let error = rd_kafka_assign(handle, nil)
        if error != RD_KAFKA_RESP_ERR_NO_ERROR { context.append(.event(.error(KafkaError(error, message: "unassigning")))) }
    } else if let failure = rd_kafka_incremental_unassign(handle, partitions) {
        context.append(.event(.error(KafkaError(consuming: failure))))
    }
}

/// Under a ``CommittedFloor`` that knows some of `changed`: asks the coordinator for the
/// committed offsets of `partitions`, and gives each partition whose floor (the member's own last
/// commit) lies above the answer its floor as its start, in the list librdkafka then assigns (it
/// starts a partition given an offset there, and asks the coordinator for the others).
/// - Returns: every partition's start (the committed offsets raised to the floors), or nil when no
///   partition has a floor or the coordinator did not answer: librdkafka then asks it itself, as
///   without a floor.
private func raiseToFloor(
    _ handle: OpaquePointer, _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, _ changed: [TopicPartition],
    context: ConsumerContext
) -> [TopicPartition: Int64]? {
    guard let floor = context.committedFloor, let partitions else { return nil }
    // Every assignment notes its raised starts (none when it returns early), for the owner to
    // commit once more: ``CommittedFloor/takeRaisedStarts(among:)``.
    var raisedStarts: [TopicPartition: Int64] = [:]
    defer { floor.noteStarts(of: changed, raised: raisedStarts) }
    let floors = floor.offsets(of: changed)
    guard !floors.isEmpty else { return nil }
    let committed: [TopicPartition: Int64]
    do {
        committed = try committedOffsets(handle, partitions)
    } catch {
        context.logger.warning(
            "cannot compare the group's committed offsets with this member's own commits; the assignment starts where the coordinator says",
            metadata: [KafkaLogKey.error: "\(error)"])
        return nil
    }
    var raised: [String] = []
    for (partition, own) in floors.sorted(by: { ($0.key.topic, $0.key.partition) < ($1.key.topic, $1.key.partition) })
    where own > committed[partition] ?? -1 {
        guard let element = rd_kafka_topic_partition_list_find(partitions, partition.topic, partition.partition) else { continue }
        element.pointee.offset = own
        raisedStarts[partition] = own
        raised.append("\(partition.topic)[\(partition.partition)] \(committed[partition].map(String.init) ?? "none") < \(own)")
    }
    if !raised.isEmpty {
        // Kafka never answers so (it answers UNSTABLE_OFFSET_COMMIT while a transaction holds
        // the offsets back); Tansu does, until older transactions on the same partitions end.
        context.logger.notice(
            "the group's committed offsets lie below this member's own commits; those partitions start from its own",
            metadata: [KafkaLogKey.partitions: "\(raised.joined(separator: ", "))"])
    }
    return committed.merging(floors, uniquingKeysWith: max)
}

/// The group's committed offsets of `partitions` (the next offset to read); a partition without
/// one is left out. Asks the coordinator, waiting up to 10 s.
/// - Throws: ``KafkaError`` when the coordinator did not answer in time, or answered with an
///   error for a partition.
private func committedOffsets(
    _ handle: OpaquePointer, _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
) throws(KafkaError) -> [TopicPartition: Int64] {
    guard let partitions, let copy = rd_kafka_topic_partition_list_copy(partitions) else { return [:] }
    defer { rd_kafka_topic_partition_list_destroy(copy) }
    let error = rd_kafka_committed(handle, copy, 10_000)
    guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error, message: "reading the committed offsets") }
    if let failure = RDKafkaTopicPartitionList.firstError(in: copy) { throw failure }
    var offsets: [TopicPartition: Int64] = [:]
    for index in 0..<Int(copy.pointee.cnt) {
        let element = copy.pointee.elems[index]
        guard element.offset >= 0, let topic = element.topic else { continue }
        offsets[TopicPartition(topic: String(cString: topic), partition: element.partition)] = element.offset
    }
    return offsets
}

/// Hands the statistics JSON to the poll loop (copied; librdkafka frees its buffer when we return 0).
private func statisticsCallback(
    _ handle: OpaquePointer?, _ json: UnsafeMutablePointer<CChar>?, _ length: Int, _ opaque: UnsafeMutableRawPointer?
) -> Int32 {
    guard let json, let context = consumerContext(opaque) else { return 0 }
    let text = String(decoding: UnsafeRawBufferPointer(start: json, count: length), as: UTF8.self)
    context.append(.statistics(text))
    return 0
}

/// Reports client-level errors (brokers down, fatal errors) as events.
private func errorCallback(
    _ handle: OpaquePointer?, _ code: Int32, _ reason: UnsafePointer<CChar>?, _ opaque: UnsafeMutableRawPointer?
) {
    guard let context = consumerContext(opaque) else { return }
    let error = rd_kafka_resp_err_t(rawValue: code)
    if error == RD_KAFKA_RESP_ERR__FATAL, let handle {
        // A fatal error: report the underlying cause, marked fatal.
        var explanation = [CChar](repeating: 0, count: 512)
        let cause = rd_kafka_fatal_error(handle, &explanation, explanation.count)
        context.append(.event(.error(KafkaError(cause, message: String(cBuffer: explanation), isFatal: true))))
        return
    }
    let message = reason.map { String(cString: $0) }
    context.append(.event(.error(KafkaError(error, message: message))))
}

extension RDKafkaClient {
    /// Gives up released `partitions` (poll thread only), as the rebalance callback gives up
    /// those it need not wait for: under an eager protocol the whole assignment. A failure is
    /// reported through `context` as an event.
    func unassign(_ partitions: [TopicPartition], context: ConsumerContext) {
        RDKafkaTopicPartitionList(partitions).withPointer { unassignPartitions(handle, $0, context: context) }
    }

    /// Sends a commit of `offsets` whose result is delivered through the consumer queue (served by the
    /// poll thread) to the waiter registered under `key`; never blocks.
    /// - Returns: nil when the commit was sent (its result comes to the waiter), else the error.
    func commit(_ offsets: [TopicPartitionOffset], key: UnsafeMutableRawPointer) -> KafkaError? {
        let error = RDKafkaTopicPartitionList(offsets).withPointer { rd_kafka_commit_queue(handle, $0, consumerQueue, commitCallback, key) }
        return error == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(error)
    }
}

/// Completes the commit identified by `commitOpaque` with the broker's answer (served on the poll thread).
private func commitCallback(
    _ handle: OpaquePointer?, _ error: rd_kafka_resp_err_t,
    _ offsets: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, _ commitOpaque: UnsafeMutableRawPointer?
) {
    guard let handle, let commitOpaque, let context = consumerContext(rd_kafka_opaque(handle)),
        let waiter = context.takeCommit(commitOpaque)
    else { return }
    if error != RD_KAFKA_RESP_ERR_NO_ERROR {
        waiter.complete(.failure(KafkaError(error)), logger: context.logger)
    } else if let offsets, let failure = RDKafkaTopicPartitionList.firstError(in: offsets) {
        waiter.complete(.failure(failure), logger: context.logger)
    } else {
        waiter.complete(.success(()), logger: context.logger)
    }
}
