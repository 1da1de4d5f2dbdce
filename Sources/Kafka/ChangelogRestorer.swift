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
    ///     `openTransactionWait`).
    ///   - openTransactionWait: how long a partition is read on past its first end for an open
    ///     transaction to end (``defaultOpenTransactionWait`` unless a test needs a wait that no
    ///     machine's speed can outlast).
    ///   - logger: where librdkafka's log lines of the restoring client go.
    /// - Returns: the end each partition was read to (the first offset not read; a partition
    ///   without records is absent).
    /// - Throws: ``KafkaError`` when a client cannot be created, the partitions' ends cannot be
    ///   learnt, or the restore takes longer than `timeout`.
    package static func restore(
        _ ranges: [Range], configuration: ConsumerConfiguration, timeout: Duration = .seconds(120), waitsForOpenTransactions: Bool = true,
        openTransactionWait: Duration = Self.defaultOpenTransactionWait, logger: Logger, apply: (KafkaMessage) -> Void
    ) throws(KafkaError) -> [TopicPartition: Int64] {
        let wanted = ranges.filter { ($0.end ?? 1) > 0 }
        guard !wanted.isEmpty else { return [:] }
        let config = RDKafkaConfig()
        for (name, value) in configuration.librdkafkaProperties where name != "partition.assignment.strategy" {
            try config.set(name, value)
        }
        try config.set("enable.partition.eof", "true")
        let client = try RDKafkaClient(.consumer, config: config, context: ClientContext(logger: logger))
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
            let latest = try Self.offsets(of: queried, at: RDKafkaOffset.end, client: client, deadline: deadline)
            let earliest = try Self.offsets(of: queried, at: RDKafkaOffset.beginning, client: client, deadline: deadline)
            for partition in queried where (latest[partition] ?? 0) > (earliest[partition] ?? 0) {
                ends[partition] = .max
            }
        }
        guard !ends.isEmpty else { return [:] }
        let fromBeginning = ends.keys.map { TopicPartitionOffset(topic: $0.topic, partition: $0.partition, offset: RDKafkaOffset.beginning) }
        if let failure = client.assign(fromBeginning, failure: "assigning the partitions to restore") { throw failure }
        defer { _ = client.closeConsumer() }
        var decoder = MessageDecoder()
        var unfinished = Set(ends.keys)
        var reached: [TopicPartition: Int64] = [:]
        let readsCommitted = configuration.isolationLevel == .readCommitted && waitsForOpenTransactions
        // The partitions waiting for an open transaction to end, and only those.
        var waits: [TopicPartition: OpenTransactionWait] = [:]
        while !unfinished.isEmpty {
            guard ContinuousClock.now < deadline else {
                throw KafkaError.timedOut("restoring \(unfinished.map { "\($0.topic)[\($0.partition)]" }.sorted().joined(separator: ","))")
            }
            // A partition that waited its bound for an open transaction ends where it is.
            // (`waits` holds only the partitions still waiting: looked through at every poll, a
            // list of every partition that ever ended cost a hash of each per poll.)
            for (partition, wait) in waits where ContinuousClock.now - wait.firstEnd >= openTransactionWait {
                waits[partition] = nil
                unfinished.remove(partition)
                if wait.lastEnd > 0 { reached[partition] = wait.lastEnd }
                logger.warning(
                    "restore ends at the last stable offset: a transaction is still open",
                    metadata: ["kafka.topic": "\(partition.topic)", "kafka.partition": "\(partition.partition)"])
            }
            guard !unfinished.isEmpty else { break }
            guard let message = client.consumerPoll(milliseconds: 100) else { continue }
            defer { message.destroy() }
            let offset = message.offset
            let partition = TopicPartition(topic: decoder.topicName(message.topicHandle), partition: message.partition)
            let status = message.status
            if status == .partitionEnd {
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
                        ?? OpenTransactionWait(
                            highWatermark: client.cachedHighWatermark(of: partition) ?? 0, firstEnd: .now, lastEnd: offset)
                    wait.lastEnd = offset
                    // Bounded: a broker that never moves its last stable offset up (or a member
                    // that never comes back, until the transaction times out) must not stall every
                    // restore; past the bound the partition ends where it is, as it used to.
                    if offset < wait.highWatermark, ContinuousClock.now - wait.firstEnd < openTransactionWait {
                        if !wait.isLogged {
                            wait.isLogged = true
                            logger.notice(
                                "restore waits for an open transaction to end",
                                metadata: [
                                    "kafka.topic": "\(partition.topic)", "kafka.partition": "\(partition.partition)",
                                    "lastStableOffset": "\(offset)", "highWatermark": "\(wait.highWatermark)",
                                ])
                        }
                        waits[partition] = wait
                        continue
                    }
                }
                unfinished.remove(partition)
                waits[partition] = nil
                // An empty partition stays absent, as when the query told it so.
                if offset > 0 { reached[partition] = min(offset, ends[partition] ?? offset) }
                continue
            }
            guard status == .record else {
                throw message.error(message: "restoring \(partition.topic)[\(partition.partition)]")
            }
            guard let end = ends[partition], unfinished.contains(partition) else { continue }
            if offset < end { apply(decoder.decode(message)) }
            if offset + 1 >= end {
                unfinished.remove(partition)
                reached[partition] = end
            }
        }
        return reached
    }

    /// The offsets of `partitions` at `position` (``RDKafkaOffset/end`` or
    /// ``RDKafkaOffset/beginning``), asked within what is left of the restore's time.
    private static func offsets(
        of partitions: [TopicPartition], at position: Int64, client: RDKafkaClient, deadline: ContinuousClock.Instant
    ) throws(KafkaError) -> [TopicPartition: Int64] {
        let left = max(deadline - ContinuousClock.now, .milliseconds(1))
        let offsets = try client.offsets(of: partitions, at: position, milliseconds: Int32(clamping: left.clampedMilliseconds)).get()
        return Dictionary(offsets.map { (TopicPartition(topic: $0.topic, partition: $0.partition), $0.offset) }) { $1 }
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
    package static let defaultOpenTransactionWait: Duration = .seconds(20)
}
