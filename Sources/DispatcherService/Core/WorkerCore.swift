import Dispatcher
import Kafka
import Records

/// Everything the worker knows, as one value behind one lock: the partitions it owns (epochs,
/// offset trackers, commits), the records waiting behind their ordering keys, flow control, the
/// intake it wants, and its one tally of counts.
///
/// Transitions are plain mutating methods that take the time they need and return what the
/// service must do afterwards, as ``WorkerEffects`` (start these records, hold or restart the
/// intake, release these partitions, log these rewinds). The service carries the effects out
/// after releasing the lock, so no Kafka call, log line or task start ever runs under it; and the
/// core is tested as values, without Kafka (`WorkerCoreTests`).
///
/// One record's bookkeeping takes the lock three times, each time for its whole batch: when the
/// batch is taken in (``admit(_:at:)``), before its outputs are produced
/// (``beginPublishing(_:outputBytes:)``), and once they are acknowledged (``finish(_:outputBytes:)``).
struct WorkerCore: Sendable {
    /// The state of one owned partition.
    struct Partition: Sendable {
        /// Which partition it is.
        let partition: TopicPartition
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
        /// Exactly-once: the lowest offset taken in since the last transaction committed, where
        /// processing starts again when the transaction is aborted (``completeRewind()``).
        var uncommittedSince: Int64?
    }

    /// A partition whose offsets went backwards within one assignment, and where they went.
    struct Rewind: Sendable, Equatable {
        var partition: TopicPartition
        /// The offset the consumer handed over.
        var offset: Int64
        /// The position after the highest offset received before it.
        var previousNext: Int64
    }

    /// Revoked partitions and the assignment epoch each had when revoked: the revocation later
    /// removes a partition only while it still has that epoch.
    struct Revocation: Sendable, Equatable {
        var epochs: [TopicPartition: UInt64]
        var partitions: Set<TopicPartition> { Set(epochs.keys) }
    }

    /// A record whose outputs were produced: acknowledged (with its result), or given up (the
    /// task was cancelled, or the producer stopped the worker). Given-up records are not done.
    struct Published: Sendable {
        var item: WorkItem
        var result: DispatchResult?
    }

    private(set) var partitions: [TopicPartition: Partition] = [:]
    private var queues = SerialQueues<OrderingKey, WorkItem>()
    private(set) var flow: FlowControl
    /// What orders records after one another (`dispatch.ordering`).
    let policy: OrderingPolicy
    /// `dispatch.ordering`.
    var ordering: OrderingMode { policy.mode }
    /// The intake as the core last decided it, and how many times it decided.
    private var intake = IntakeChange(held: false, sequence: 0)
    private var nextEpoch: UInt64 = 1
    /// Set by graceful shutdown: no new record is taken.
    private(set) var isShuttingDown = false
    /// Exactly-once only: a transaction is being committed, so no record is taken in (and so
    /// none starts) until it is (``admitUnlessCommitting(_:at:)``); also while an aborted
    /// transaction's records are rewound (``beginRewind()``).
    private(set) var isCommittingTransaction = false
    /// Exactly-once only: partitions rewound whose messages fetched before the rewind may still
    /// arrive (the consumer has not reported the rewind yet): those are dropped. Per partition,
    /// the rewinds not reported yet.
    private var discarding: [TopicPartition: Int] = [:]
    /// The ordering keys of records given up (not done, no longer running): their keys stay
    /// taken, so that their successors never overtake them, until a rewind frees them.
    private var givenUpKeys: Set<OrderingKey> = []
    /// Every count, once.
    private(set) var tally = WorkerTally()

    /// Two records that change one activity or one device's stored notifications run one after
    /// another (the policy's shared ordering), and their changelog records are written in the
    /// order the changes were made.
    init(flow: FlowControl, ordering: OrderingMode, sharedOrdering: [String: String] = [:]) {
        self.flow = flow
        self.policy = OrderingPolicy(mode: ordering, sharedOrdering: sharedOrdering)
    }

    /// Records in flight (running or waiting behind their key).
    var inFlight: Int { flow.records }

    /// Whether the intake is held now.
    var isIntakeHeld: Bool { intake.held }

    /// The counters and gauges at `now`.
    func statistics(at now: ContinuousClock.Instant) -> WorkerStatistics {
        var statistics = WorkerStatistics()
        statistics.tally = tally
        statistics.inFlight = flow.records
        statistics.isHolding = flow.isHolding
        statistics.assignedPartitions = partitions.count
        statistics.oldestInFlightAge = oldestInFlightAge(at: now)
        return statistics
    }

    // MARK: Assignment

    /// New partitions were assigned: each starts a new epoch with nothing in flight.
    mutating func assign(_ assigned: [TopicPartition]) {
        for partition in assigned {
            partitions[partition] = Partition(partition: partition, epoch: nextEpoch)
            nextEpoch += 1
        }
        tally.rebalances += 1
    }

    /// Partitions are being revoked: they take no new records and their waiting records are
    /// dropped (not started: a later owner processes them). Running records finish.
    ///
    /// - Parameter dropsWaiting: `false` in exactly-once mode, where the waiting records run too:
    ///   a dropped record would leave the commit below records after it whose outputs are in the
    ///   transaction already, and they would be written again by the next owner.
    /// - Returns: the effects, and the revocation to complete once the partitions drained.
    mutating func beginRevoking(_ revoked: [TopicPartition], dropsWaiting: Bool = true) -> (WorkerEffects, Revocation) {
        var epochs: [TopicPartition: UInt64] = [:]
        for partition in revoked {
            partitions[partition]?.isRevoking = true
            epochs[partition] = partitions[partition]?.epoch
        }
        if dropsWaiting { dropWaiting(of: revoked) }
        var effects = WorkerEffects()
        decideIntake(into: &effects)
        return (effects, Revocation(epochs: epochs))
    }

    /// Completes a revocation: removes the revoked partitions that still have the epoch they had
    /// when revoked. A partition lost and assigned again while its revocation drained is a new
    /// assignment: the old revocation must neither remove nor release it.
    /// - Returns: the effects, the partitions to release in the consumer among them.
    mutating func completeRevocation(_ revocation: Revocation) -> WorkerEffects {
        let removed = revocation.epochs.compactMap { partition, epoch in
            partitions[partition]?.epoch == epoch ? partition : nil
        }
        var effects = remove(removed)
        effects.release = removed
        return effects
    }

    /// Partitions were lost (the session expired): forgotten at once, without a commit. Their
    /// in-flight records become stale: their results are dropped when they finish.
    mutating func lose(_ lost: [TopicPartition]) -> WorkerEffects {
        remove(lost)
    }

    /// Whether the partitions have no record in flight (`nil`: all partitions).
    func isDrained(_ subset: Set<TopicPartition>?) -> Bool {
        partitions.allSatisfy { entry in
            guard subset?.contains(entry.key) ?? true else { return true }
            return entry.value.inProgress == 0
        }
    }

    // MARK: Intake

    /// Takes a batch of consumed records into flight.
    ///
    /// An offset below one already received in the same assignment (the consumer rewound: an
    /// offset reset, a truncated log, a redelivery) is never skipped: the partition starts a new
    /// generation of offsets from it, and the commit stays behind the earlier generation's
    /// pending records until they finish. The service logs the rewinds the effects carry.
    /// - Returns: the records that may start now (at most one per ordering key), the rewinds, and
    ///   the intake to hold when the batch reached a limit.
    mutating func admit(_ messages: [KafkaMessage], at now: ContinuousClock.Instant) -> WorkerEffects {
        var table = PartitionTable()
        let admissions = messages.map { message in
            let partition = TopicPartition(topic: message.topic, partition: message.partition)
            let key = message.key.map { key in key.withUnsafeBytes { policy.key(of: partition, token: $0) } }
                ?? policy.key(of: partition, token: nil)
            return Admission(partition: table.index(of: partition), offset: message.offset, key: key, bytes: WorkItem.bytes(of: message))
        }
        var effects = WorkerEffects()
        let admitted = admit(admissions, of: table, at: now, into: &effects) { index, epoch, generation in
            WorkItem(message: messages[index], epoch: epoch, generation: generation, orderingKey: admissions[index].key)
        }
        for (index, outcome) in admitted.enumerated() {
            if case .started(let epoch, let generation) = outcome {
                effects.start.append(
                    WorkItem(message: messages[index], epoch: epoch, generation: generation, orderingKey: admissions[index].key))
            }
        }
        return effects
    }

    /// The partitions of a batch's records, each once, in the order met: records name theirs by
    /// its index here, so that no record carries (and copies) a topic's name.
    struct PartitionTable: Sendable {
        /// The partitions.
        private(set) var partitions: [TopicPartition] = []

        /// The index of `partition`, added when new. A batch holds runs of one partition: the
        /// last one is looked at first.
        mutating func index(of partition: TopicPartition) -> Int {
            if let last = partitions.indices.last, partitions[last] == partition { return last }
            if let index = partitions.firstIndex(of: partition) { return index }
            partitions.append(partition)
            return partitions.count - 1
        }

        /// The partition at `index`.
        subscript(index: Int) -> TopicPartition { partitions[index] }
    }

    /// A consumed record as the core takes it in: where it is, what orders it, what it holds.
    struct Admission: Sendable {
        /// Its partition's index in the batch's ``PartitionTable``.
        var partition: Int
        var offset: Int64
        /// Its ordering key (``OrderingPolicy``), nil when it orders after nothing.
        var key: OrderingKey?
        /// What it holds for flow control (``WorkItem/bytes(key:value:headerBytes:headers:)``).
        var bytes: Int
        /// Whether it is a request decided where it lies, which may start behind the running
        /// records of its key while they keep it open (``SerialQueues``; `dispatch.ordering: key`
        /// only): the worker closes the key (``closeKeys(_:requeuing:)``) when it does more than
        /// write one output.
        var pipelines = false
    }

    /// What became of an admitted record.
    enum Admitted: Sendable, Equatable {
        /// It may start now: no record of its key is in flight, or it starts behind records of
        /// its key that keep the key open (``Admission/pipelines``).
        case started(epoch: UInt64, generation: UInt32)
        /// It waits behind a record of its key, as the work item made for it.
        case queued
        /// Not processed: its partition is not owned (any more) or is being revoked, or the worker
        /// is shutting down. Its offset is not committed, so a later owner processes it.
        case dropped
    }

    /// Takes records into flight: registers their offsets, their bytes and their keys.
    ///
    /// - Parameters:
    ///   - table: the partitions the admissions name.
    ///   - queue: makes the work item of a record that must wait behind its key (its index
    ///     among `admissions`, its epoch and generation): the only record copied here.
    /// - Returns: what became of each record, in order. The effects gain the rewinds and the
    ///   intake to hold; the records that may start are the caller's (``Admitted/started(epoch:generation:)``).
    mutating func admit(
        _ admissions: [Admission], of table: PartitionTable, at now: ContinuousClock.Instant, into effects: inout WorkerEffects,
        queue: (Int, UInt64, UInt32) -> WorkItem
    ) -> [Admitted] {
        tally.consumed += admissions.count
        var admitted: [Admitted] = []
        admitted.reserveCapacity(admissions.count)
        // Each partition's state is looked up once a batch.
        let indices = table.partitions.map { partitions.index(forKey: $0) }
        for position in admissions.indices {
            let admission = admissions[position]
            // Not processed: its partition is not owned (any more) or is being revoked, or the
            // worker is shutting down. Its offset is not committed, so a later owner processes it.
            // Exactly-once: a rewound partition's messages fetched before the rewind are dropped too.
            guard !isShuttingDown, let index = indices[admission.partition], partitions.values[index].isTakingRecords(),
                discarding.isEmpty || discarding[table.partitions[admission.partition]] == nil
            else {
                admitted.append(.dropped)
                continue
            }
            // Mutated in place through the dictionary's values: a copy taken out and stored back
            // would share the tracker's window with the dictionary, and the first change would copy
            // the whole window, once per record.
            let (epoch, generation) = Self.received(
                admission.offset, at: now, in: &partitions.values[index], rewinds: &effects.rewinds, skipped: &tally.offsetsSkipped)
            flow.admitted(bytes: admission.bytes)
            guard let key = admission.key else {
                admitted.append(.started(epoch: epoch, generation: generation))
                continue
            }
            switch queues.activateOrWait(key, pipelines: admission.pipelines && policy.mode == .key, { queue(position, epoch, generation) }) {
            case .started:
                admitted.append(.started(epoch: epoch, generation: generation))
            case .pipelined:
                tally.pipelined += 1
                admitted.append(.started(epoch: epoch, generation: generation))
            case .queued:
                admitted.append(.queued)
            }
        }
        tally.offsetRewinds += effects.rewinds.count
        decideIntake(into: &effects)
        return admitted
    }

    /// Exactly-once: ``admit(_:at:)``, unless a transaction is being committed; then nothing
    /// is taken (`nil`; after shutdown began, the batch is refused as ``admit(_:at:)`` refuses
    /// it) and the caller waits for the commit to end (``endTransactionCommit()``)
    /// before it tries again. Deciding under the core's lock makes the check and the admission
    /// one step, so no record can start between the commit's drain and its end.
    mutating func admitUnlessCommitting(_ messages: [KafkaMessage], at now: ContinuousClock.Instant) -> WorkerEffects? {
        // Once shutting down, admitting takes nothing in anyway, and the caller must not wait
        // for a commit that a failure may never end.
        isCommittingTransaction && !isShuttingDown ? nil : admit(messages, at: now)
    }

    /// Whether records may be taken in now: always in at-least-once mode; in exactly-once mode,
    /// not while a transaction is being committed (unless the worker is shutting down, when
    /// nothing is taken in anyway).
    var admitsRecords: Bool {
        !isCommittingTransaction || isShuttingDown
    }

    /// Registers a consumed offset with its partition (a new generation when it went back), and
    /// counts in `skipped` the offsets it jumped over.
    /// - Returns: the partition's epoch and the generation the record joins.
    private static func received(
        _ offset: Int64, at now: ContinuousClock.Instant, in state: inout Partition, rewinds: inout [Rewind], skipped: inout Int
    ) -> (epoch: UInt64, generation: UInt32) {
        if let next = state.offsets.nextOffset, offset > next { skipped += Int(offset - next) }
        if !state.offsets.received(offset, at: now) {
            rewinds.append(Rewind(partition: state.partition, offset: offset, previousNext: state.offsets.nextOffset ?? offset))
            if !state.offsets.isDrained { state.earlier[state.generation] = state.offsets }
            state.generation &+= 1
            state.offsets = PartitionOffsetTracker()
            state.offsets.received(offset, at: now)
            state.uncommittedSince = min(state.uncommittedSince ?? offset, offset)
        }
        if state.uncommittedSince == nil { state.uncommittedSince = offset }
        state.inProgress += 1
        return (state.epoch, state.generation)
    }

    // MARK: Producing and finishing

    /// Decided records are about to be produced: which of them still belong to the current
    /// assignment of their partition (the others' results are dropped: their new owner processes
    /// them again), and their outputs' bytes, held by flow control until acknowledged.
    /// - Returns: whether each record is current, in order, and the intake to hold if the
    ///   outputs reached the byte limit.
    mutating func beginPublishing(_ items: [WorkItem], outputBytes: Int) -> (isCurrent: [Bool], effects: WorkerEffects) {
        let isCurrent = items.map(isCurrent)
        flow.holding(bytes: outputBytes)
        var effects = WorkerEffects()
        decideIntake(into: &effects)
        return (isCurrent, effects)
    }

    /// Outputs of records decided in place are held until acknowledged (a negative count gives
    /// bytes back): flow control counts them beside the records they came from.
    /// - Returns: the intake to hold (or restart) if the change crossed a limit.
    mutating func holding(outputBytes: Int) -> WorkerEffects {
        if outputBytes >= 0 { flow.holding(bytes: outputBytes) } else { flow.releasing(bytes: -outputBytes) }
        var effects = WorkerEffects()
        decideIntake(into: &effects)
        return effects
    }

    /// Whether a record still belongs to the current assignment of its partition.
    func isCurrent(_ item: WorkItem) -> Bool {
        partitions[item.partition]?.epoch == item.epoch
    }

    /// Records whose outputs were produced (or that were stale): counts each acknowledged
    /// outcome once, marks the done records' offsets committable, gives back the outputs' bytes,
    /// and starts the next record of each of their keys.
    ///
    /// A record given up (no result: cancelled, the producer failed, or its transaction must be
    /// aborted) is not done: its offset is never committed and its key's successors stay queued
    /// until the partition goes (or a rewind drops them); it no longer counts as in flight. A
    /// stale record (its partition left meanwhile) is done without outputs.
    /// - Returns: the records that may start now (their keys' next), and the intake to restart.
    mutating func finish(_ published: [Published], stale: [WorkItem] = [], outputBytes: Int = 0) -> WorkerEffects {
        var effects = WorkerEffects()
        flow.releasing(bytes: outputBytes)
        tally.staleResults += stale.count
        for item in stale { finish(item, into: &effects) }
        for record in published {
            guard let result = record.result else {
                giveUp(record.item)
                continue
            }
            tally.count(result)
            tally.finished[record.item.topic, default: 0] += 1
            finish(record.item, into: &effects)
        }
        effects.progressed = true
        decideIntake(into: &effects)
        return effects
    }

    private mutating func finish(_ item: WorkItem, into effects: inout WorkerEffects) {
        let record = InFlight(epoch: item.epoch, generation: item.generation, offset: item.offset, key: item.orderingKey, bytes: item.bytes)
        finish(record, of: partitions.index(forKey: item.partition), into: &effects)
    }

    /// A record given up: no longer in flight (its bytes leave flow control, its partition's
    /// drain stops waiting for it), its offset not done, its key still taken.
    private mutating func giveUp(_ item: WorkItem) {
        if let index = partitions.index(forKey: item.partition), partitions.values[index].epoch == item.epoch {
            partitions.values[index].inProgress -= 1
        }
        flow.released(bytes: item.bytes)
        if let key = item.orderingKey {
            givenUpKeys.insert(key)
            queues.close(key)
        }
    }

    /// What the core knows of a record in flight, besides its partition, to finish it.
    struct InFlight: Sendable {
        var epoch: UInt64
        var generation: UInt32
        var offset: Int64
        var key: OrderingKey?
        var bytes: Int
    }

    /// Finishes a record of the partition at `index` in ``partitions`` (nil: gone).
    private mutating func finish(_ record: InFlight, of index: Dictionary<TopicPartition, Partition>.Index?, into effects: inout WorkerEffects) {
        if let index {
            // In place: reading the epoch through the values' getter copied the partition's state.
            partitions.values[index].finished(offset: record.offset, generation: record.generation, ofEpoch: record.epoch)
        }
        flow.released(bytes: record.bytes)
        if let key = record.key, let next = queues.next(after: key) { effects.start.append(next) }
    }

    /// Records decided in place whose outputs were acknowledged: counts each outcome once, marks
    /// their offsets committable, gives back their bytes and the outputs' bytes, and starts the
    /// next record of each of their keys.
    /// - Parameters:
    ///   - records: each record's partition (its index in `table`), what the core knows of it, and
    ///     what it counts as, in order.
    ///   - outputs: how many outputs the records wrote, by topic.
    ///   - finishedTopic: the topic the records were read from.
    mutating func finishInPlace(
        _ records: [(partition: Int, record: InFlight, labels: DispatchResult.Labels)], of table: PartitionTable,
        outputs: [String: Int], finishedTopic: String, outputBytes: Int
    ) -> WorkerEffects {
        var effects = WorkerEffects()
        flow.releasing(bytes: outputBytes)
        // Each partition's state is looked up once a batch.
        let indices = table.partitions.map { partitions.index(forKey: $0) }
        // Each distinct outcome is counted once a batch (a dictionary update each, hashed): most
        // records of a batch share theirs with the record before, which is looked at first.
        var outcomes: [(labels: DispatchResult.Labels, count: Int)] = []
        var last = 0
        for position in records.indices {
            let labels = records[position].labels
            if last < outcomes.count, outcomes[last].labels == labels {
                outcomes[last].count += 1
            } else if let found = outcomes.firstIndex(where: { $0.labels == labels }) {
                outcomes[found].count += 1
                last = found
            } else {
                last = outcomes.count
                outcomes.append((labels, 1))
            }
            finish(records[position].record, of: indices[records[position].partition], into: &effects)
        }
        for outcome in outcomes { tally.count(outcome.labels, times: outcome.count) }
        for (topic, count) in outputs { tally.outputs[topic, default: 0] += count }
        tally.finished[finishedTopic, default: 0] += records.count
        effects.progressed = true
        decideIntake(into: &effects)
        return effects
    }

    /// Records decided in place that did more than write one output (they wait, have outputs to
    /// follow their first, or went the owned way) close their keys: nothing more of those keys
    /// starts before they finish. Records that started behind one of them in the same batch
    /// (``Admission/pipelines``) wait after all, as the copies given here, in order.
    /// - Returns: the copies that may start now after all (none runs before them any more).
    mutating func closeKeys(_ keys: [OrderingKey], requeuing copies: [WorkItem]) -> WorkerEffects {
        var effects = WorkerEffects()
        for key in keys { queues.close(key) }
        for item in copies {
            guard let key = item.orderingKey else {
                effects.start.append(item)
                continue
            }
            if let start = queues.requeue(item, key: key) { effects.start.append(start) }
        }
        // They were counted as pipelined when admitted; they wait after all.
        tally.pipelined -= copies.count
        return effects
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
            partitions[TopicPartition(topic: offset.topic, partition: offset.partition)]?.committedOffset = offset.offset
        }
        tally.commits += 1
    }

    /// Records a failed commit: nothing moves; the next commit covers it.
    mutating func commitFailed() {
        tally.commitFailures += 1
    }

    /// Exactly-once: a transaction commit begins; no record is taken in until it ends.
    mutating func beginTransactionCommit() {
        isCommittingTransaction = true
    }

    /// Exactly-once: the transaction commit ended; records are taken in again.
    mutating func endTransactionCommit() {
        isCommittingTransaction = false
    }

    /// Exactly-once: a transaction committed `plan` (with nothing in flight): every record
    /// taken in before is committed.
    mutating func transactionCommitted(_ plan: [TopicPartitionOffset]) {
        committed(plan)
        for index in partitions.indices { partitions.values[index].uncommittedSince = nil }
    }

    // MARK: Rewinds (exactly-once)

    /// Exactly-once: the open transaction cannot commit (an output of it failed) and is to be
    /// aborted, so everything taken in since the last commit is to be processed again: no record
    /// is taken in (as during a commit), and the records waiting behind their keys are dropped.
    /// Running records end as they will (those whose outputs fail are given up, and leave flight).
    /// - Returns: the intake to restart if flow control held it.
    mutating func beginRewind() -> WorkerEffects {
        isCommittingTransaction = true
        dropWaiting(of: Array(partitions.keys))
        var effects = WorkerEffects()
        effects.progressed = true
        decideIntake(into: &effects)
        return effects
    }

    /// Exactly-once: the aborted transaction's records all ended (``isDrained(_:)``). Each
    /// partition that took records in since the last commit starts again, empty, from the lowest
    /// of them, and its messages fetched before the rewind are dropped until the consumer reports
    /// it (``rewound(_:)``); the keys of records given up are free again.
    /// - Returns: where each such partition goes back to: the consumer is to seek there.
    mutating func completeRewind() -> [TopicPartitionOffset] {
        var targets: [TopicPartitionOffset] = []
        for index in partitions.indices {
            guard let offset = partitions.values[index].uncommittedSince else { continue }
            let partition = partitions.keys[index]
            targets.append(TopicPartitionOffset(topic: partition.topic, partition: partition.partition, offset: offset))
            partitions.values[index].offsets = PartitionOffsetTracker()
            partitions.values[index].earlier = [:]
            partitions.values[index].generation &+= 1
            partitions.values[index].uncommittedSince = nil
            discarding[partition, default: 0] += 1
        }
        for key in givenUpKeys { queues.forget(key) }
        givenUpKeys = []
        return targets
    }

    /// The consumer reported a rewind of `rewound` (``ConsumerEvent/rewound(_:)``): their
    /// messages from now on come from the positions the rewind went back to.
    mutating func rewound(_ rewound: [TopicPartition]) {
        for partition in rewound {
            guard let count = discarding[partition] else { continue }
            discarding[partition] = count > 1 ? count - 1 : nil
        }
    }

    // MARK: Shutdown

    /// Stops taking records: graceful shutdown has begun. The intake restarts whatever flow
    /// control wants, because commit results arrive through polling and a held intake would hold
    /// the shutdown's commit; records taken from now on are dropped uncommitted.
    mutating func beginShutdown() -> WorkerEffects {
        isShuttingDown = true
        var effects = WorkerEffects()
        effects.progressed = true
        decideIntake(into: &effects)
        return effects
    }

    // MARK: Observation

    /// The consumer's latest lag per partition.
    mutating func received(lag: [TopicPartition: Int64]) {
        tally.lag = lag
    }

    /// How long the oldest record in flight has been in flight (zero when none).
    func oldestInFlightAge(at now: ContinuousClock.Instant) -> Duration {
        let oldest = partitions.values.lazy.compactMap(\.oldestPendingAdmission).min()
        return oldest.map { now - $0 } ?? .zero
    }

    /// The partitions whose oldest record in flight was taken in more than `limit` before `now`
    /// (their commit cannot have moved for that long), in topic and partition order; and the
    /// records in flight for longer than `overdueAfter`.
    func stalls(stalledAfter limit: Duration, overdueAfter: Duration, at now: ContinuousClock.Instant) -> (stalled: [TopicPartition], overdue: Int) {
        let stalled = partitions.compactMap { partition, state in
            state.oldestPendingAdmission.map { now - $0 > limit } == true ? partition : nil
        }.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
        let overdue = partitions.values.reduce(0) { $0 + $1.pendingCount(admittedBefore: now - overdueAfter) }
        return (stalled, overdue)
    }

    // MARK: Private

    /// Partitions leave the worker (released after revocation, or lost).
    private mutating func remove(_ removed: [TopicPartition]) -> WorkerEffects {
        for partition in removed { partitions[partition] = nil }
        dropWaiting(of: removed)
        var effects = WorkerEffects()
        tally.rebalances += 1
        effects.progressed = true
        decideIntake(into: &effects)
        return effects
    }

    /// Drops the records waiting behind their key in the given partitions: they never start, and
    /// their offsets stay unfinished so no commit passes them.
    private mutating func dropWaiting(of removed: [TopicPartition]) {
        let gone = Set(removed)
        for item in queues.removeWaiting(where: { gone.contains($0.partition) }) {
            partitions[item.partition]?.inProgress -= 1
            flow.released(bytes: item.bytes)
        }
    }

    /// Compares the intake flow control wants (never held once shutdown began) with the one last
    /// decided; a change becomes an effect, numbered so the service applies changes decided close
    /// together in the order they were decided (``IntakeChange``).
    private mutating func decideIntake(into effects: inout WorkerEffects) {
        let held = flow.isHolding && !isShuttingDown
        guard held != intake.held else { return }
        intake = IntakeChange(held: held, sequence: intake.sequence + 1)
        effects.intake = intake
    }
}

extension WorkerCore.Partition {
    /// Whether new records of the partition are taken in (it is not being revoked). A method,
    /// mutating for no change: called through the dictionary's values in place, where reading a
    /// property through their getter copied the partition's state (its offset windows).
    mutating func isTakingRecords() -> Bool { !isRevoking }

    /// A record is done: the record at `offset` of offset generation `generation`, when it
    /// belongs to this partition's current assignment (`epoch`); a record of an earlier one
    /// changes nothing.
    mutating func finished(offset: Int64, generation recordGeneration: UInt32, ofEpoch recordEpoch: UInt64) {
        guard recordEpoch == epoch else { return }
        if recordGeneration == generation {
            offsets.finished(offset)
        } else if var tracker = earlier.removeValue(forKey: recordGeneration) {
            tracker.finished(offset)
            if !tracker.isDrained { earlier[recordGeneration] = tracker }
        }
        inProgress -= 1
    }

    /// The offset to commit: the lowest pending offset over every generation (everything before
    /// it is done), `nil` before anything was received.
    var committableOffset: Int64? {
        earlier.values.compactMap(\.committableOffset).reduce(offsets.committableOffset) { lowest, offset in
            min(lowest ?? offset, offset)
        }
    }

    /// When its oldest pending record, of any generation, was taken in. Read tracker by tracker,
    /// without an array of them: the health checks ask every partition each second.
    var oldestPendingAdmission: ContinuousClock.Instant? {
        var oldest = offsets.oldestPendingAdmission
        for tracker in earlier.values {
            guard let admitted = tracker.oldestPendingAdmission else { continue }
            oldest = min(oldest ?? admitted, admitted)
        }
        return oldest
    }

    /// How many records pending in any generation were taken in before `instant`.
    func pendingCount(admittedBefore instant: ContinuousClock.Instant) -> Int {
        earlier.values.reduce(offsets.pendingCount(admittedBefore: instant)) { $0 + $1.pendingCount(admittedBefore: instant) }
    }
}
