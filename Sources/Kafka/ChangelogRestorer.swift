internal import CRdKafka
package import Logging
package import Records

/// Reads partitions from their beginning up to an end, synchronously, outside any group: how a
/// member restores the state of partitions it was just assigned (a changelog to its end, a table's
/// source topic to the group's committed offset) before it consumes them.
///
/// It blocks its thread: the consumer runs it on its poll thread, inside the rebalance callback,
/// before the assignment takes effect, so no record of those partitions is consumed before their
/// state is whole.
package enum ChangelogRestorer {
    /// One partition to read from its beginning.
    package struct Range: Sendable, Hashable {
        /// The partition.
        package var partition: TopicPartition
        /// The first offset not to read; nil: the partition's end (its high watermark, or under
        /// `read_committed` its last stable offset).
        package var end: Int64?

        /// A range of `partition`, up to `end`.
        package init(_ partition: TopicPartition, end: Int64? = nil) {
            self.partition = partition
            self.end = end
        }
    }

    /// Reads every range and hands each record to `apply`, in offset order per partition.
    ///
    /// - Parameters:
    ///   - configuration: where the brokers are and how to read (its isolation level); its group
    ///     is not joined.
    ///   - timeout: the longest the whole restore may take.
    ///   - waitsForOpenTransactions: read `read_committed`, whether a partition whose last stable
    ///     offset an open transaction holds back is read on until it ends (at most
    ///     ``openTransactionWait``).
    ///   - logger: where librdkafka's log lines of the restoring client go.
    /// - Returns: the end each partition was read to (the first offset not read; a partition
    ///   without records is absent).
    /// - Throws: ``KafkaError`` when a client cannot be created, the partitions' ends cannot be
    ///   learnt, or the restore takes longer than `timeout`.
    package static func restore(
        _ ranges: [Range], configuration: ConsumerConfiguration, timeout: Duration = .seconds(120), waitsForOpenTransactions: Bool = true,
        logger: Logger, apply: (KafkaMessage) -> Void
    ) throws(KafkaError) -> [TopicPartition: Int64] {
        let wanted = ranges.filter { ($0.end ?? 1) > 0 }
        guard !wanted.isEmpty else { return [:] }
        let config = RDKafkaConfig()
        for (name, value) in configuration.librdkafkaProperties where name != "partition.assignment.strategy" {
            try config.set(name, value)
        }
        try config.set("enable.partition.eof", "true")
        let client = try RDKafkaClient(type: RD_KAFKA_CONSUMER, config: config, context: ClientContext(logger: logger))
        let handle = client.handle
        let deadline = ContinuousClock.now + timeout
        // Where to stop: the range's end, or for a partition read to its end the end the fetch
        // reports (`enable.partition.eof`), which is what the brokers hold when it is read. The
        // queried high watermark only tells an empty partition from one to read: some brokers
        // answer it short (Tansu 0.6 gives the last batch's base offset + 1).
        var ends: [TopicPartition: Int64] = [:]
        var queried: [TopicPartition] = []
        for range in wanted {
            if let end = range.end {
                ends[range.partition] = end
            } else if configuration.isolationLevel == .readCommitted {
                // Read `read_committed`, the query answers the last stable offset, which an open
                // transaction holds back (to the beginning, for one that began first): it cannot
                // tell an empty partition, and the partition is read to the end its fetches report.
                ends[range.partition] = .max
            } else {
                queried.append(range.partition)
            }
        }
        if !queried.isEmpty {
            // Every partition's first and next offsets in two ListOffsets requests (a broker each),
            // not a watermark query per partition: one round trip each, one after another, made a
            // restore of 128 empty partitions cost 17 million instructions (`bench counts`) and as
            // many round trips.
            let latest = try Self.offsets(of: queried, at: -1, handle: handle, deadline: deadline)  // RD_KAFKA_OFFSET_END
            let earliest = try Self.offsets(of: queried, at: -2, handle: handle, deadline: deadline)  // RD_KAFKA_OFFSET_BEGINNING
            for partition in queried where (latest[partition] ?? 0) > (earliest[partition] ?? 0) {
                ends[partition] = .max
            }
        }
        guard !ends.isEmpty else { return [:] }
        let list = RDKafkaTopicPartitionList(ends.keys.map { TopicPartitionOffset(topic: $0.topic, partition: $0.partition, offset: -2) })  // -2: RD_KAFKA_OFFSET_BEGINNING
        let assigned = list.withPointer { rd_kafka_assign(handle, $0) }
        guard assigned == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(assigned, message: "assigning the partitions to restore")
        }
        defer { _ = rd_kafka_consumer_close(handle) }
        var decoder = MessageDecoder()
        var unfinished = Set(ends.keys)
        var reached: [TopicPartition: Int64] = [:]
        let readsCommitted = configuration.isolationLevel == .readCommitted && waitsForOpenTransactions
        // The partitions waiting for an open transaction to end, and only those.
        var waits: [TopicPartition: OpenTransactionWait] = [:]
        while !unfinished.isEmpty {
            guard ContinuousClock.now < deadline else {
                throw KafkaError(RD_KAFKA_RESP_ERR__TIMED_OUT, message: "restoring \(unfinished.map { "\($0.topic)[\($0.partition)]" }.sorted().joined(separator: ","))")
            }
            // A partition that waited its bound for an open transaction ends where it is.
            // (`waits` holds only the partitions still waiting: looked through at every poll, a
            // list of every partition that ever ended cost a hash of each per poll.)
            for (partition, wait) in waits where ContinuousClock.now - wait.firstEnd >= Self.openTransactionWait {
                waits[partition] = nil
                unfinished.remove(partition)
                if wait.lastEnd > 0 { reached[partition] = wait.lastEnd }
                logger.warning(
                    "restore ends at the last stable offset: a transaction is still open",
                    metadata: ["kafka.topic": "\(partition.topic)", "kafka.partition": "\(partition.partition)"])
            }
            guard !unfinished.isEmpty else { break }
            guard let message = rd_kafka_consumer_poll(handle, 100) else { continue }
            defer { rd_kafka_message_destroy(message) }
            let raw = message.pointee
            let partition = TopicPartition(topic: decoder.topicName(raw.rkt), partition: raw.partition)
            if raw.err == RD_KAFKA_RESP_ERR__PARTITION_EOF {
                // The EOF's offset is the partition's end: the next offset to read. Read
                // `read_committed`, that end is the last stable offset, which a transaction left
                // open (by a member that was killed) holds back: committed records after it would
                // be missed. So such a partition is read on until its last stable offset reaches
                // the high watermark seen at its first end, that is until the transaction ends
                // (its producer starts again, or it times out), within the restore's time.
                guard unfinished.contains(partition) else { continue }
                if readsCommitted, ends[partition] == .max {
                    var wait =
                        waits[partition]
                        ?? OpenTransactionWait(highWatermark: Self.highWatermark(of: partition, handle: handle), firstEnd: .now, lastEnd: raw.offset)
                    wait.lastEnd = raw.offset
                    // Bounded: a broker that never moves its last stable offset up (or a member
                    // that never comes back, until the transaction times out) must not stall every
                    // restore; past the bound the partition ends where it is, as it used to.
                    if raw.offset < wait.highWatermark, ContinuousClock.now - wait.firstEnd < Self.openTransactionWait {
                        if !wait.isLogged {
                            wait.isLogged = true
                            logger.notice(
                                "restore waits for an open transaction to end",
                                metadata: [
                                    "kafka.topic": "\(partition.topic)", "kafka.partition": "\(partition.partition)",
                                    "lastStableOffset": "\(raw.offset)", "highWatermark": "\(wait.highWatermark)",
                                ])
                        }
                        waits[partition] = wait
                        continue
                    }
                }
                unfinished.remove(partition)
                waits[partition] = nil
                // An empty partition stays absent, as when the query told it so.
                if raw.offset > 0 { reached[partition] = min(raw.offset, ends[partition] ?? raw.offset) }
                continue
            }
            guard raw.err == RD_KAFKA_RESP_ERR_NO_ERROR else {
                throw KafkaError(raw.err, message: "restoring \(partition.topic)[\(partition.partition)]")
            }
            guard let end = ends[partition], unfinished.contains(partition) else { continue }
            if raw.offset < end { apply(decoder.decode(message)) }
            if raw.offset + 1 >= end {
                unfinished.remove(partition)
                reached[partition] = end
            }
        }
        return reached
    }

    /// The offsets of `partitions` at `position`: -1 for the next offset to be written (the high
    /// watermark), -2 for the first one kept; by ListOffsets, as `rd_kafka_query_watermark_offsets`
    /// asks, for every partition at once (`rd_kafka_offsets_for_times` sends the two positions
    /// as the protocol's "latest" and "earliest" timestamps).
    private static func offsets(
        of partitions: [TopicPartition], at position: Int64, handle: OpaquePointer, deadline: ContinuousClock.Instant
    ) throws(KafkaError) -> [TopicPartition: Int64] {
        let list = RDKafkaTopicPartitionList(partitions.map { TopicPartitionOffset(topic: $0.topic, partition: $0.partition, offset: position) })
        // Within what is left of the restore's time.
        let left = max(deadline - ContinuousClock.now, .milliseconds(1))
        let result: Result<[TopicPartitionOffset], KafkaError> = list.withPointer { pointer in
            let error = rd_kafka_offsets_for_times(handle, pointer, Int32(clamping: left.clampedMilliseconds))
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                return .failure(KafkaError(error, message: "the ends of \(partitions.count) partitions to restore"))
            }
            if let failure = RDKafkaTopicPartitionList.firstError(in: pointer) { return .failure(failure) }
            return .success(RDKafkaTopicPartitionList.offsets(in: pointer))
        }
        return Dictionary(try result.get().map { (TopicPartition(topic: $0.topic, partition: $0.partition), $0.offset) }) { $1 }
    }

    /// A partition read `read_committed` that reached its end while its last stable offset was
    /// below its high watermark: a transaction is open in it.
    private struct OpenTransactionWait {
        /// The high watermark at its first end, which its last stable offset must reach.
        let highWatermark: Int64
        /// When it first reached its end.
        let firstEnd: ContinuousClock.Instant
        /// Its end the last time it reached it: where it ends if the wait runs out.
        var lastEnd: Int64
        /// Whether the wait was logged.
        var isLogged = false
    }

    /// How long a partition read `read_committed` is read on past its first end, for a transaction
    /// left open to end: a killed member that starts again ends it within seconds.
    static let openTransactionWait: Duration = .seconds(20)

    /// The high watermark of `partition` as the last fetch reported it (not the last stable
    /// offset, whatever the isolation level).
    private static func highWatermark(of partition: TopicPartition, handle: OpaquePointer) -> Int64 {
        var low: Int64 = 0
        var high: Int64 = 0
        guard rd_kafka_get_watermark_offsets(handle, partition.topic, partition.partition, &low, &high) == RD_KAFKA_RESP_ERR_NO_ERROR
        else { return 0 }
        return high
    }
}
