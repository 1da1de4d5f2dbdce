import BlockingWork
public import Logging
public import Records

/// A Kafka group consumer (`cooperative-sticky` or `range`: ``ConsumerConfiguration/assignor``)
/// whose events arrive as an `AsyncSequence`.
///
/// A dedicated poll thread (not the cooperative pool) polls until ``close()`` and feeds
/// ``events``; it waits only while the intake is held (``holdIntake(_:)``) or the last batch of
/// messages is unread. Offsets are never committed automatically: commit explicit per-partition
/// offsets (the next offset to read) with ``commit(_:)`` or ``commitAsync(_:)``.
///
/// Rebalances: ``ConsumerEvent/assigned(_:)`` partitions are already assigned;
/// ``ConsumerEvent/revoked(_:)`` partitions stay assigned (polling continues) until you call
/// ``releaseRevoked(_:)`` after finishing and committing their work; ``ConsumerEvent/lost(_:)``
/// partitions are already gone. While a revocation is pending, librdkafka fetches nothing new for any
/// partition (verified on the embedded broker), so release as soon as the revoked work is done.
public final class KafkaConsumer: Sendable {
    /// State shared with the poll thread.
    private let core: ConsumerCore
    /// The consumer's events, in order; ends after ``close()``. Iterate from one task only, and
    /// keep reading: the poll thread hands a batch of messages over only once the last one was
    /// taken, and until then polls nothing (no rebalances, no commit results either).
    public let events: KafkaConsumerEvents

    /// What a member does with partitions just assigned, before it consumes them: it gets the
    /// partitions and a way to ask the group coordinator for their committed offsets, and says
    /// whether the assignment takes effect.
    ///
    /// - Parameters:
    ///   - partitions: the partitions newly assigned.
    ///   - committedOffsets: asks the group coordinator for the committed offsets of
    ///     `partitions` (the next offset to read; a partition without one is left out), waiting
    ///     up to 10 s; call it again to ask again. It throws ``KafkaError`` when the coordinator
    ///     does not answer in time or answers with an error for a partition. Valid only during
    ///     the call.
    /// - Returns: `true` when the assignment takes effect (reported as
    ///   ``ConsumerEvent/assigned(_:)``); `false` **holds** the partitions: they are assigned
    ///   paused and never reported, so nothing of them reaches the owner, and the next rebalance
    ///   gives them up at once (the owner is expected to close the consumer).
    public typealias BeforeAssign = @Sendable (
        _ partitions: [TopicPartition], _ committedOffsets: () throws(KafkaError) -> [TopicPartition: Int64]
    ) -> Bool

    /// Told on the poll thread, inside the rebalance callback, that `partitions` were lost (the
    /// group gave them to another member: the session expired), before the
    /// ``ConsumerEvent/lost(_:)`` event is queued. An owner whose reader of ``events`` may be busy
    /// for a while learns of the loss at once. It must return at once (no waiting, no call to the
    /// consumer): polling waits for it. Not called for the partitions given up while closing.
    public typealias OnLost = @Sendable (_ partitions: [TopicPartition]) -> Void

    /// Creates the consumer and starts its poll thread.
    ///
    /// - Parameter beforeAssign: run on the poll thread, inside the rebalance callback, with each
    ///   new assignment before it takes effect: nothing is consumed (from any partition) until it
    ///   returns, so it may restore the partitions' state (``ChangelogRestorer``), or hold the
    ///   partitions when it could not. Polling waits for it: it must return well within
    ///   `max.poll.interval.ms`.
    /// - Parameter onLost: told of partitions lost, before their event is queued (``OnLost``).
    /// - Parameter committedFloor: the member's own commits, which its owner raises after each
    ///   one: a partition assigned again starts at the higher of the group's committed offset and
    ///   its floor (``CommittedFloor``), and `beforeAssign` is given that higher offset.
    /// - Throws: ``KafkaError`` when librdkafka rejects a property.
    public init(
        configuration: ConsumerConfiguration, logger: Logger, beforeAssign: BeforeAssign? = nil, onLost: OnLost? = nil,
        committedFloor: CommittedFloor? = nil
    ) throws(KafkaError) {
        core = try ConsumerCore(
            configuration: configuration, mode: .group, logger: logger, beforeAssign: beforeAssign, onLost: onLost,
            committedFloor: committedFloor)
        events = KafkaConsumerEvents(stream: core.stream, intake: core.intake)
        core.start()
    }

    deinit {
        core.requestClose(waiter: nil)
    }

    /// Joins the group for `topics`; assignments arrive as ``ConsumerEvent/assigned(_:)``.
    public func subscribe(topics: [String]) throws(KafkaError) {
        try requireClient("subscribe").subscribe(topics)
    }

    /// Completes a revocation: the caller finished its work for these partitions (and committed);
    /// the poll thread then unassigns them (`rd_kafka_incremental_unassign`; under an eager assignor
    /// the whole assignment, `rd_kafka_assign(NULL)`). Until then polling continues.
    public func releaseRevoked(_ partitions: [TopicPartition]) {
        core.release(partitions)
    }

    /// Commits `offsets` (next offset to read, per partition) and suspends until the broker answered.
    ///
    /// Never blocks a thread: the result comes back through the consumer queue to the poll thread.
    /// While the group is rebalancing a broker may refuse it (`REBALANCE_IN_PROGRESS`, or on the 2.0.2
    /// embedded broker also `ILLEGAL_GENERATION` during a pending revocation); the records are then
    /// read again by the next owner (at-least-once).
    public func commit(_ offsets: [TopicPartitionOffset]) async throws(KafkaError) {
        let result = await withCheckedContinuation { continuation in
            core.commit(offsets, waiter: CommitWaiter(continuation))
        }
        try result.get()
    }

    /// Commits `offsets` without waiting; a failure is logged.
    public func commitAsync(_ offsets: [TopicPartitionOffset]) {
        core.commit(offsets, waiter: CommitWaiter(nil))
    }

    /// Stops (`true`) or restarts (`false`) taking messages, for flow control without ``pause(_:)``.
    ///
    /// While held, the poll thread does not poll: librdkafka keeps the messages it prefetched and
    /// stops fetching once its queue limits are reached (`queued.min.messages`,
    /// `queued.max.messages.kbytes`, per partition), and taking messages again resumes at once.
    /// Pausing instead drops the prefetched messages, and librdkafka 2.0.2 fetches again only
    /// after about `fetch.error.backoff.ms` (0.5 s by default). The price: rebalance events, errors and
    /// statistics, and the results of commits, also wait until the intake restarts (messages
    /// already handed over still arrive), so restart before awaiting a commit that must finish.
    ///
    /// A hold that lasts half of `max.poll.interval.ms` (at most 30 s) pauses every assigned
    /// partition and polls on, so the member never leaves its group however long the hold
    /// (output retries through a broker outage): events flow again, and the paused partitions
    /// resume when the intake restarts. An owner that holds the intake should not also
    /// ``pause(_:)`` partitions: the end of a long hold resumes what it paused.
    public func holdIntake(_ held: Bool) {
        core.intake.set(held: held)
    }

    /// Stops fetching from `partitions` (polling continues; they stay assigned).
    public func pause(_ partitions: [TopicPartition]) throws(KafkaError) {
        try requireClient("pause").pause(partitions)
    }

    /// Resumes fetching from paused `partitions`.
    public func resume(_ partitions: [TopicPartition]) throws(KafkaError) {
        try requireClient("resume").resume(partitions)
    }

    /// Moves assigned partitions to `offsets` (the next offset to read, per partition), as a
    /// restart from those offsets would: what librdkafka prefetched from the old positions is
    /// dropped (`rd_kafka_seek_partitions`, waiting up to `timeout`), and so are the partitions'
    /// messages the poll thread collected and has not handed over.
    ///
    /// Messages of these partitions handed over before are still in ``events`` (or with the
    /// reader): ``ConsumerEvent/rewound(_:)`` follows them, and every message of theirs after it
    /// comes from the new positions. Runs on the poll thread (served within 100 ms, even while
    /// the intake is held); a transactional consumer moves back to its committed offsets so after
    /// an aborted transaction (librdkafka's INTRODUCTION.md, "Transactional producer").
    /// - Throws: ``KafkaError`` when a partition could not be moved (not assigned, `timeout`
    ///   passed), or after ``close()``.
    public func rewind(_ offsets: [TopicPartitionOffset], timeout: Duration) async throws(KafkaError) {
        if let failure = await core.rewind(offsets, milliseconds: timeout.clampedMilliseconds) { throw failure }
    }

    /// The group's committed offsets for `partitions` (negative when none is committed).
    ///
    /// Asks the coordinator on a thread of its own, never on the cooperative pool.
    public func committed(_ partitions: [TopicPartition], timeout: Duration) async throws(KafkaError) -> [TopicPartitionOffset] {
        let client = try requireClient("committed")
        let milliseconds = timeout.clampedMilliseconds
        let result: Result<[TopicPartitionOffset], KafkaError> = await BlockingWork.run(onThreadNamed: "kafka-committed") {
            client.committed(partitions, milliseconds: milliseconds)
        }
        return try result.get()
    }

    /// Leaves the group (committing nothing by itself), stops the poll thread, destroys the handle and
    /// ends ``events``. Partitions still owned are reported as ``ConsumerEvent/lost(_:)`` while closing.
    public func close() async {
        await withCheckedContinuation { continuation in
            core.requestClose(waiter: continuation)
        }
    }

    /// The consumer's group membership now (a copy), for a transactional producer's offsets.
    ///
    /// A local call (no request to the cluster): safe on any thread.
    /// - Throws: ``KafkaError`` after ``close()``, or when the consumer is not in a group.
    public func groupMetadata() throws(KafkaError) -> ConsumerGroupMetadata {
        try requireClient("groupMetadata").groupMetadata()
    }

    /// The handle, or a "shut down" error once closing.
    func requireClient(_ operation: String) throws(KafkaError) -> RDKafkaClient {
        guard let client = core.client else { throw KafkaError.shutDown(operation) }
        return client
    }
}
