internal import CRdKafka
import Foundation
import Logging
import Records
import Synchronization

/// What a consumer's C callbacks see: a buffer for the events they report and the commits awaiting results.
///
/// The callbacks run inside `rd_kafka_consumer_poll`/`rd_kafka_consumer_close` on the consumer's poll
/// thread (one queue serves everything); they only append to ``pending`` or complete a commit waiter.
final class ConsumerContext: ClientContext, @unchecked Sendable {
    // @unchecked Sendable: all mutable state is in `Mutex`/`Atomic`.

    /// Events reported by callbacks, taken by the poll loop after each poll (keeps them in order with messages).
    let pending = Mutex<[PendingEvent]>([])
    /// Commits awaiting their result, by the address passed as `commit_opaque`; removing one completes it once.
    let commits = Mutex<[UInt: CommitWaiter]>([:])
    /// Set while `rd_kafka_consumer_close` runs: revocations are then released at once.
    let isClosing = Atomic<Bool>(false)
    /// Run in the rebalance callback with newly assigned partitions, before the assignment takes
    /// effect (``KafkaConsumer/init(configuration:logger:beforeAssign:)``).
    let beforeAssign: KafkaConsumer.BeforeAssign?
    /// Partitions ``beforeAssign`` held: assigned paused, never reported to the owner, given up at
    /// the next revocation. Read and written on the poll thread (the callbacks and the long hold).
    let held = Mutex<Set<TopicPartition>>([])

    /// A context that logs to `logger` and runs `beforeAssign` on each assignment.
    init(logger: Logger, beforeAssign: KafkaConsumer.BeforeAssign? = nil) {
        self.beforeAssign = beforeAssign
        super.init(logger: logger)
    }

    /// A callback's report, converted by the poll loop.
    enum PendingEvent {
        /// A ready consumer event.
        case event(ConsumerEvent)
        /// Statistics JSON, parsed by the poll loop (not in the callback).
        case statistics(String)
    }

    /// Takes every pending event.
    func takePending() -> [PendingEvent] {
        pending.withLock { pending in
            guard !pending.isEmpty else { return [] }
            let taken = pending
            pending = []
            return taken
        }
    }

    /// Appends one callback event.
    func append(_ event: PendingEvent) {
        pending.withLock { $0.append(event) }
    }

    /// Forgets the held partitions among `partitions` and returns them.
    func takeHeld(among partitions: [TopicPartition]) -> Set<TopicPartition> {
        held.withLock { held in
            guard !held.isEmpty else { return [] }
            let taken = held.intersection(partitions)
            held.subtract(taken)
            return taken
        }
    }

    /// Registers a commit and returns the opaque pointer that identifies it.
    func register(_ waiter: CommitWaiter) -> UnsafeMutableRawPointer {
        let key = Unmanaged.passUnretained(waiter).toOpaque()
        commits.withLock { $0[UInt(bitPattern: key)] = waiter }
        return key
    }

    /// Removes the commit identified by `key` (nil when already completed).
    func takeCommit(_ key: UnsafeMutableRawPointer) -> CommitWaiter? {
        commits.withLock { $0.removeValue(forKey: UInt(bitPattern: key)) }
    }

    /// Fails every commit still awaiting a result (called after the handle is destroyed).
    func failOutstandingCommits() {
        let waiters = commits.withLock { commits in
            let taken = Array(commits.values)
            commits = [:]
            return taken
        }
        for waiter in waiters { waiter.complete(.failure(KafkaError.shutDown("commit")), logger: logger) }
    }
}

/// One commit awaiting its result: an awaited commit's continuation, or nothing for a fire-and-forget one.
final class CommitWaiter: Sendable {
    /// Resumed with the result; nil for ``KafkaConsumer/commitAsync(_:)``.
    private let continuation: CheckedContinuation<Result<Void, KafkaError>, Never>?

    /// Creates a waiter.
    init(_ continuation: CheckedContinuation<Result<Void, KafkaError>, Never>?) {
        self.continuation = continuation
    }

    /// Hands over the result (the registry guarantees this runs once); fire-and-forget failures are logged.
    func complete(_ result: Result<Void, KafkaError>, logger: Logger) {
        if let continuation {
            continuation.resume(returning: result)
        } else if case .failure(let error) = result {
            logger.warning("asynchronous commit failed", metadata: [KafkaLogKey.error: "\(error)"])
        }
    }
}

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
        var takesEffect = true
        if let beforeAssign = context.beforeAssign, !changed.isEmpty, !context.isClosing.load(ordering: .acquiring) {
            takesEffect = beforeAssign(changed) { () throws(KafkaError) in try committedOffsets(handle, partitions) }
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
        if rd_kafka_assignment_lost(handle) != 0 || context.isClosing.load(ordering: .acquiring) {
            unassign(handle, partitions, context: context)
            if !reported.isEmpty { context.append(.event(.lost(reported))) }
        } else if reported.isEmpty {
            // Nothing for the owner to finish: held partitions only, or none (a member without
            // partitions: more members than partitions). Under an eager protocol librdkafka
            // waits for the unassign call before the member joins again, and the owner releases
            // no empty list: done here, at once.
            unassign(handle, partitions, context: context)
        } else {
            if !held.isEmpty, !isEager(handle) {
                // Cooperative: the held ones go now, the owner releases the rest (eager: all go
                // together when the owner releases).
                RDKafkaTopicPartitionList(Array(held)).withPointer { unassign(handle, $0, context: context) }
            }
            context.append(.event(.revoked(reported)))
        }
    default:
        context.append(.event(.error(KafkaError(error, message: "rebalance failed"))))
    }
}

/// Whether the group's rebalance protocol is eager (a `range` or `roundrobin` assignor): the
/// whole assignment is given up and handed out at each rebalance.
func isEager(_ handle: OpaquePointer) -> Bool {
    guard let name = rd_kafka_rebalance_protocol(handle) else { return false }
    return String(cString: name) == "EAGER"
}

/// Gives up `partitions`: all of them under an eager protocol (`rd_kafka_assign(NULL)`), only
/// those under the cooperative one.
func unassign(
    _ handle: OpaquePointer, _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, context: ConsumerContext
) {
    if isEager(handle) {
        let error = rd_kafka_assign(handle, nil)
        if error != RD_KAFKA_RESP_ERR_NO_ERROR { context.append(.event(.error(KafkaError(error, message: "unassigning")))) }
    } else if let failure = rd_kafka_incremental_unassign(handle, partitions) {
        context.append(.event(.error(KafkaError(consuming: failure))))
    }
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
    /// Sends a commit of `offsets` whose result is delivered through the consumer queue (served by the
    /// poll thread) to the waiter registered under `key`; never blocks.
    func commit(_ offsets: RDKafkaTopicPartitionList, key: UnsafeMutableRawPointer) -> rd_kafka_resp_err_t {
        offsets.withPointer { rd_kafka_commit_queue(handle, $0, consumerQueue, commitCallback, key) }
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
