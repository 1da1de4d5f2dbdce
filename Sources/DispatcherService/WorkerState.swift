import Kafka

/// Everything the worker knows about its partitions and the records in flight, as one value behind
/// one lock.
///
/// Transitions are plain mutating methods that return what the caller must do afterwards (start a
/// record, pause or resume fetching, commit); the caller performs those actions after releasing the
/// lock, so no Kafka call ever runs under it.
struct WorkerState: Sendable {
    /// The state of one owned partition.
    struct Partition: Sendable {
        var epoch: UInt64
        var offsets = PartitionOffsetTracker()
        /// The generation of ``offsets``: it starts over when the consumer hands over an offset
        /// below one already received (a rewind), and records carry the generation they joined.
        var generation: UInt32 = 0
        /// The trackers of earlier generations that still have records pending, by generation:
        /// the commit may not pass their lowest pending offset either.
        var earlier: [UInt32: PartitionOffsetTracker] = [:]
        /// Revoked by the group: takes no new records, finishes those in flight, then goes.
        var isRevoking = false
        /// The last offset committed for it, to skip commits that would change nothing.
        var committedOffset: Int64?
        /// Records taken and not finished (running or waiting). Records dropped while waiting
        /// leave this count but stay unfinished in `offsets`, so the commit never passes them.
        var inProgress = 0
    }

    /// What to do with a consumed record.
    enum Admission: Sendable {
        /// Start it now.
        case start(WorkItem)
        /// It waits behind an earlier record of its key.
        case queued
        /// Not processed: its partition is not owned (any more), it was already received, or the
        /// worker is shutting down. Its offset is not committed, so a later owner processes it.
        case dropped
    }

    /// A partition whose offsets went backwards within one assignment, and where they went.
    struct Rewind: Sendable, Equatable {
        var partition: TopicPartition
        /// The offset the consumer handed over.
        var offset: Int64
        /// The position after the highest offset received before it.
        var previousNext: Int64
    }

    private(set) var partitions: [TopicPartition: Partition] = [:]
    private var queues = SerialQueues<OrderingKey, WorkItem>()
    private(set) var flow: FlowControl
    private var nextEpoch: UInt64 = 1
    /// Set by graceful shutdown: no new record is taken.
    private(set) var isShuttingDown = false

    init(flow: FlowControl) {
        self.flow = flow
    }

    /// Records in flight (running or waiting behind their key).
    var inFlight: Int { flow.records }

    /// Whether the intake is held by flow control.
    var isPaused: Bool { flow.isPaused }

    // MARK: Assignment

    /// New partitions were assigned: each starts a new epoch with nothing in flight.
    mutating func assign(_ assigned: [TopicPartition]) {
        for partition in assigned {
            partitions[partition] = Partition(epoch: nextEpoch)
            nextEpoch += 1
        }
    }

    /// Partitions are being revoked: they take no new records and their waiting records are
    /// dropped (not started: a later owner processes them). Running records finish.
    /// - Returns: the flow-control actions, and the assignment epoch of each revoked partition
    ///   owned now: the revocation later removes a partition only while it still has that epoch.
    mutating func beginRevoking(_ revoked: [TopicPartition]) -> (actions: [FlowControl.Action], epochs: [TopicPartition: UInt64]) {
        var epochs: [TopicPartition: UInt64] = [:]
        for partition in revoked {
            partitions[partition]?.isRevoking = true
            epochs[partition] = partitions[partition]?.epoch
        }
        return (dropWaiting(of: revoked), epochs)
    }

    /// Partitions leave the worker (released after revocation, or lost). Their in-flight records
    /// become stale: their results are dropped when they finish.
    mutating func remove(_ removed: [TopicPartition]) -> [FlowControl.Action] {
        for partition in removed { partitions[partition] = nil }
        return dropWaiting(of: removed)
    }

    /// Removes the revoked partitions that still have the epoch they had when revoked. A partition
    /// lost and assigned again while its revocation drained is a new assignment: the old
    /// revocation must neither remove nor release it.
    /// - Returns: the flow-control actions, and the partitions removed (to release in the consumer).
    mutating func remove(revoked epochs: [TopicPartition: UInt64]) -> (actions: [FlowControl.Action], removed: [TopicPartition]) {
        let removed = epochs.compactMap { partition, epoch in partitions[partition]?.epoch == epoch ? partition : nil }
        return (remove(removed), removed)
    }

    /// Whether the partitions have no record in flight (`nil`: all partitions).
    func isDrained(_ subset: Set<TopicPartition>?) -> Bool {
        partitions.allSatisfy { entry in
            guard subset?.contains(entry.key) ?? true else { return true }
            return entry.value.inProgress == 0
        }
    }

    /// Stops taking records: graceful shutdown has begun.
    mutating func beginShutdown() {
        isShuttingDown = true
    }

    // MARK: Records

    /// Decides what happens to a consumed record.
    ///
    /// An offset below one already received in the same assignment (the consumer rewound: an
    /// offset reset, a truncated log, a redelivery) is never skipped: the partition starts a new
    /// generation of offsets from it, and the commit stays behind the earlier generation's
    /// pending records until they finish. The caller logs and counts the returned rewind.
    mutating func admit(_ message: KafkaMessage, orderingKey: OrderingKey?) -> (Admission, FlowControl.Action?, Rewind?) {
        let partition = TopicPartition(topic: message.topic, partition: message.partition)
        guard !isShuttingDown, var state = partitions[partition], !state.isRevoking else { return (.dropped, nil, nil) }
        var rewind: Rewind?
        if !state.offsets.received(message.offset) {
            rewind = Rewind(partition: partition, offset: message.offset, previousNext: state.offsets.nextOffset ?? message.offset)
            if !state.offsets.isDrained { state.earlier[state.generation] = state.offsets }
            state.generation &+= 1
            state.offsets = PartitionOffsetTracker()
            state.offsets.received(message.offset)
        }
        state.inProgress += 1
        partitions[partition] = state
        let item = WorkItem(message: message, epoch: state.epoch, generation: state.generation, orderingKey: orderingKey)
        let action = flow.admitted(bytes: item.bytes)
        guard let key = orderingKey else { return (.start(item), action, rewind) }
        if let ready = queues.enqueue(item, key: key) { return (.start(ready), action, rewind) }
        return (.queued, action, rewind)
    }

    /// Whether a record still belongs to the current assignment of its partition.
    func isCurrent(_ item: WorkItem) -> Bool {
        partitions[item.partition]?.epoch == item.epoch
    }

    /// A record is done (its outputs acknowledged, or dropped as stale): its offset may be
    /// committed and the next record of its key may start.
    mutating func finish(_ item: WorkItem) -> (next: WorkItem?, action: FlowControl.Action?) {
        if var state = partitions[item.partition], state.epoch == item.epoch {
            if item.generation == state.generation {
                state.offsets.finished(item.message.offset)
            } else if var earlier = state.earlier[item.generation] {
                earlier.finished(item.message.offset)
                state.earlier[item.generation] = earlier.isDrained ? nil : earlier
            }
            state.inProgress -= 1
            partitions[item.partition] = state
        }
        let action = flow.released(bytes: item.bytes)
        guard let key = item.orderingKey else { return (nil, action) }
        return (queues.next(after: key), action)
    }

    /// Records in flight hold `bytes` more (their outputs, until acknowledged).
    mutating func holding(bytes: Int) -> FlowControl.Action? {
        flow.holding(bytes: bytes)
    }

    /// Records in flight give back `bytes` they held.
    mutating func releasing(bytes: Int) -> FlowControl.Action? {
        flow.releasing(bytes: bytes)
    }

    // MARK: Commits

    /// The offsets to commit: for each owned partition (or those given), the committable offset
    /// when it moved since the last commit.
    func commitPlan(for subset: Set<TopicPartition>? = nil) -> [TopicPartitionOffset] {
        partitions.compactMap { partition, state in
            guard subset?.contains(partition) ?? true,
                let offset = state.committableOffset,
                offset != state.committedOffset
            else { return nil }
            return TopicPartitionOffset(topic: partition.topic, partition: partition.partition, offset: offset)
        }
    }

    /// Records a successful commit.
    mutating func committed(_ offsets: [TopicPartitionOffset]) {
        for offset in offsets {
            let partition = TopicPartition(topic: offset.topic, partition: offset.partition)
            partitions[partition]?.committedOffset = offset.offset
        }
    }

    // MARK: Private

    /// Drops the records waiting behind their key in the given partitions: they never start, and
    /// their offsets stay unfinished so no commit passes them.
    private mutating func dropWaiting(of removed: [TopicPartition]) -> [FlowControl.Action] {
        let gone = Set(removed)
        let dropped = queues.removeWaiting { gone.contains($0.partition) }
        return dropped.compactMap { item in
            partitions[item.partition]?.inProgress -= 1
            return flow.released(bytes: item.bytes)
        }
    }
}

extension WorkerState.Partition {
    /// The offset to commit: the lowest pending offset over every generation (everything before
    /// it is done), `nil` before anything was received.
    var committableOffset: Int64? {
        earlier.values.compactMap(\.committableOffset).reduce(offsets.committableOffset) { lowest, offset in
            min(lowest ?? offset, offset)
        }
    }
}
