import Dispatcher
import Kafka
import Records

@testable import DispatcherService

/// A reference model of the worker's core: plays a ``CoreScenario`` against a real
/// ``WorkerCore`` the way the service drives it (``DispatchWorker``), keeps its own simple account
/// of every record, partition, key and commit, and after every call into the core checks that
/// the two agree and that the core's invariants hold (docs/worker.md, "Ordering", "Offsets",
/// "Backpressure", "Rebalances", "Exactly-once"):
///
/// 1. a commit plan never passes a record that is not done, and offers exactly the lowest offset
///    not done; every offset below the group's committed offset was done at least once
///    (exactly-once: exactly once, in a committed transaction, and no done record is left above
///    its partition's committed offset);
/// 2. a key's records start in the order they were taken in, one at a time, except that a lent
///    batch's request may start behind running ones of its key decided in place that keep the
///    key open (pipelined), and waits after all when one before it in its batch closes the key;
/// 3. every record taken in ends once (done, given up, stale) or is dropped with its partition;
///    nothing starts twice, nothing dropped starts;
/// 4. the intake is held exactly when flow control's limits say, from what is in flight;
/// 5. a revocation that drained leaves nothing of its partitions in flight.
///
/// One scenario, one model, no randomness of its own, so a scenario replays exactly. Classes
/// (the model, its records and partitions), not values: in a debug build, every read of a field
/// through a value copied the whole value, and the checks after every step read many.
final class WorkerCoreModel {
    /// Where the core and the model disagree, or an invariant broke.
    struct Violation: Error {
        var message: String
    }

    /// Plays `scenario`.
    /// - Returns: what broke, with the trace of the calls that led there (nil when nothing did),
    ///   and what the scenario reached.
    static func check(_ scenario: CoreScenario, ordering: OrderingMode, exactlyOnce: Bool) -> (failure: String?, reached: Reached) {
        let model = WorkerCoreModel(scenario, ordering: ordering, exactlyOnce: exactlyOnce, tracing: false)
        guard model.run() != nil else { return (nil, model.reached) }
        // Played again with a trace: only failing scenarios pay for it.
        let traced = WorkerCoreModel(scenario, ordering: ordering, exactlyOnce: exactlyOnce, tracing: true)
        let violation = traced.run()
        let failure =
            "\(violation?.message ?? "the scenario passed when traced") (ordering \(ordering), "
            + "\(exactlyOnce ? "exactly-once" : "at-least-once"))\n" + (traced.trace?.lines ?? []).joined(separator: "\n")
        return (failure, model.reached)
    }

    /// Figures of what the scenarios reached, to show that the generator reaches the states that
    /// matter.
    struct Reached: Sendable {
        var steps = 0
        var records = 0
        var holds = 0
        var dropped = 0
        var stale = 0
        var givenUp = 0
        var offsetRewinds = 0
        var revocationsDrained = 0
        var commits = 0
        var transactionRewinds = 0
        var pipelined = 0
        var requeued = 0

        static func += (total: inout Reached, more: Reached) {
            total.steps += more.steps
            total.records += more.records
            total.holds += more.holds
            total.dropped += more.dropped
            total.stale += more.stale
            total.givenUp += more.givenUp
            total.offsetRewinds += more.offsetRewinds
            total.revocationsDrained += more.revocationsDrained
            total.commits += more.commits
            total.transactionRewinds += more.transactionRewinds
            total.pipelined += more.pipelined
            total.requeued += more.requeued
        }
    }

    // MARK: The model's state

    /// Where a record is.
    enum State: Equatable {
        /// Taken in, behind a record of its key.
        case waiting
        /// Started, its outputs not produced yet.
        case running
        /// Its outputs produced, not acknowledged yet.
        case publishing
        /// Acknowledged with a result.
        case finished
        /// Given up (not done; its key stays taken).
        case givenUp
        /// Its partition left before it finished: done without outputs.
        case stale
        /// Dropped while waiting, with its partition (or by a rewind).
        case dropped
    }

    /// What holds a key: its running records, in start order, and the records given up (they
    /// keep it taken); whether a lent batch's request may start behind the running ones.
    struct Holder: Equatable {
        var running: [Int]
        var givenUp = 0
        var isOpen: Bool
    }

    /// A key as the model knows it: the partition that orders it and the token (-1: null, -2:
    /// the whole partition).
    struct Key: Hashable {
        var partition: Int
        var token: Int
    }

    /// Where a record is, uniquely: its partition, assignment, generation and offset.
    struct Place: Hashable {
        var partition: Int
        var epoch: UInt64
        var generation: UInt32
        var offset: Int64
    }

    /// A record taken into flight.
    final class Record {
        let partition: Int
        let epoch: UInt64
        let generation: UInt32
        let offset: Int64
        let bytes: Int
        let key: Key?
        let message: KafkaMessage
        var state: State
        /// The work item the core handed out (started the owned way, or queued).
        var item: WorkItem?
        /// What the core knows of it, when it started in place.
        var inFlight: WorkerCore.InFlight?
        /// Whether it publishes in place (``WorkerCore/finishInPlace(_:of:outputs:finishedTopic:outputBytes:)``).
        var inPlace = false
        /// The outputs' bytes it holds while publishing.
        var outputBytes = 0
        /// Whether its partition was current when it began publishing.
        var currentAtPublish = true
        /// Exactly-once: taken in since the last transaction commit (not yet committed or aborted).
        var sinceCommit = true

        init(partition: Int, epoch: UInt64, generation: UInt32, offset: Int64, bytes: Int, key: Key?, message: KafkaMessage, state: State) {
            self.partition = partition
            self.epoch = epoch
            self.generation = generation
            self.offset = offset
            self.bytes = bytes
            self.key = key
            self.message = message
            self.state = state
        }
    }

    /// A partition as the model knows it, with the consumer's and the group's view of it.
    final class Partition {
        var owned = false
        var epoch: UInt64 = 0
        var revoking = false
        /// The consumer's next offset to fetch.
        var position: Int64 = 0
        /// The group's committed offset.
        var brokerCommitted: Int64 = 0
        /// What the core believes committed (``WorkerCore/Partition/committedOffset``).
        var coreCommitted: Int64?
        var generation: UInt32 = 0
        /// The position after the last offset received in the current generation.
        var nextAfterReceived: Int64?
        /// The records in the core's offset trackers (this assignment, since the last reset).
        var tracked: [Int] = []
        /// At-least-once: every offset done while its partition was current.
        var everDone: Set<Int64> = []
        /// Exactly-once: how many times each offset was done in a committed transaction.
        var committedOutputs: [Int64: Int] = [:]
        /// Exactly-once: rewinds the consumer has not reported yet, where each goes.
        var pendingRewinds: [Int64] = []
    }

    /// Exactly-once: where the transaction is.
    enum Phase {
        case open
        case committing
        case rewinding
    }

    static let universe = [
        TopicPartition(topic: "requests", partition: 0),
        TopicPartition(topic: "requests", partition: 1),
        TopicPartition(topic: "devices", partition: 0),
    ]
    /// The partition that orders each partition's keys: devices 0 shares requests 0's
    /// (``OrderingPolicy/sharedOrdering``).
    static let orderingPartition = [0, 1, 0]
    /// Record keys: three tokens and Kafka's null key.
    static let tokens: [[UInt8]?] = [Array("a".utf8), Array("b".utf8), Array("c".utf8), nil]
    static let labels = DispatchResult.Labels(outcome: .none, launch: nil, hasExtensionReport: false)

    let scenario: CoreScenario
    let ordering: OrderingMode
    let exactlyOnce: Bool
    /// The calls made, when tracing (a reference: noting a line changes nothing of the model).
    let trace: Trace?
    let now = ContinuousClock.now
    var core: WorkerCore

    let partitions = (0..<3).map { _ in Partition() }
    var records: [Record] = []
    var places: [Place: Int] = [:]
    var holders: [Key: Holder] = [:]
    var waiting: [Key: [Int]] = [:]
    /// Started records not publishing, in start order.
    var running: [Int] = []
    var publishing: [Int] = []
    var revocations: [WorkerCore.Revocation] = []
    var sentCommits: [[TopicPartitionOffset]] = []
    /// The last start, per key and place, for the order of starts.
    var lastStart: [Key: Place] = [:]

    /// Records and bytes in flight, as the model counts them.
    var inFlightRecords = 0
    var inFlightBytes = 0
    /// Whether flow control holds, as the model follows its limits.
    var flowHolds = false
    /// The intake as the service applied the core's decisions.
    var appliedIntake = false
    var intakeSequence: UInt64 = 0
    var shuttingDown = false
    var phase = Phase.open
    var rewindRequested = false
    var stopped = false

    var consumed = 0
    /// Requests started behind running ones of their key (and not requeued).
    var pipelined = 0
    var staleCount = 0
    var offsetRewinds = 0
    var reached = Reached()
    var stepIndex = -1
    /// Whether the current step did something (``note(_:)``).
    var acted = false

    init(_ scenario: CoreScenario, ordering: OrderingMode, exactlyOnce: Bool, tracing: Bool) {
        self.scenario = scenario
        self.ordering = ordering
        self.exactlyOnce = exactlyOnce
        trace = tracing ? Trace() : nil
        core = WorkerCore(
            flow: FlowControl(maxRecords: scenario.maxRecords, maxBytes: scenario.maxBytes, resumeRatio: Double(scenario.resumeQuarters) / 4),
            ordering: ordering, sharedOrdering: ["devices": "requests"])
    }

    /// Plays the scenario, then lets everything finish (``settle()``).
    /// - Returns: the first violation, if any.
    func run() -> Violation? {
        do throws(Violation) {
            try assign(Array(0..<3))
            for (index, step) in scenario.steps.enumerated() {
                guard !stopped else { break }
                stepIndex = index
                if let trace { trace.lines.append("step \(index): \(step.testDescription)") }
                acted = false
                try perform(step)
                guard acted else { continue }
                try checkAll()
                reached.steps += 1
            }
            stepIndex = scenario.steps.count
            if !stopped {
                note("settling")
                try settle()
            }
            return nil
        } catch {
            return error
        }
    }

    func perform(_ step: CoreStep) throws(Violation) {
        switch step.kind {
        case .admit: try admit(step)
        case .publish: try publish(step)
        case .acknowledge: try acknowledge(step)
        case .finish:
            guard !running.isEmpty else { return }
            try publish(step)
            try acknowledge(CoreStep(.acknowledge, publishing.count - 1, step.b, step.c))
        case .acknowledgeAll: try acknowledgeAll()
        case .revoke: try revoke(step)
        case .completeRevocation: try completeRevocation(step)
        case .lose: try lose(step)
        case .assign: try assign(selected(step.a) { !$0.owned })
        case .planCommit: try planCommit()
        case .acknowledgeCommit: try acknowledgeCommit(step)
        case .rewindConsumer:
            guard !exactlyOnce else { return }
            let p = step.a % 3
            guard partitions[p].owned else { return }
            partitions[p].position = max(0, partitions[p].position - Int64(1 + step.b))
            note("the consumer goes back to \(Self.universe[p])@\(partitions[p].position)")
        case .shutdown:
            guard !shuttingDown else { return }
            shuttingDown = true
            try apply(core.beginShutdown(), flow: nil)
            note("shutdown begins")
        case .beginTransactionCommit: try beginTransactionCommit()
        case .commitTransaction:
            guard exactlyOnce, phase == .committing, !rewindRequested, core.isDrained(nil) else { return }
            try commitTransaction(failing: step.b == 7)
        case .beginRewind: try beginRewind()
        case .completeRewind: try completeRewind()
        case .reportRewound: try reportRewound(step.a % 3)
        }
    }

    // MARK: Intake

    /// Existing offsets: the log has gaps (compaction), at every fifth offset.
    static func exists(_ offset: Int64, in partition: Int) -> Bool {
        (offset + Int64(partition)) % 5 != 4
    }

    static func existing(from offset: Int64, in partition: Int) -> Int64 {
        var offset = offset
        while !exists(offset, in: partition) { offset += 1 }
        return offset
    }

    /// What the model expects of a record taken in.
    enum Expected: Equatable {
        case started(Int)
        case queued(Int)
        case dropped
    }

    func admit(_ step: CoreStep) throws(Violation) {
        let first = step.a % 3
        let count = 1 + step.b % 4
        let inPlace = step.b >= 4
        var positions = partitions.map(\.position)
        var messages: [KafkaMessage] = []
        var indices: [Int] = []
        var tokens: [Int] = []
        for i in 0..<count {
            let p = step.a >= 3 ? (first + i) % 3 : first
            let offset = Self.existing(from: positions[p], in: p)
            positions[p] = offset + 1
            let token = (step.c >> (2 * i)) & 3
            let size = (step.c &* (i + 3)) % 61
            messages.append(
                KafkaMessage(
                    topic: Self.universe[p].topic, partition: Self.universe[p].partition, offset: offset, key: Self.tokens[token],
                    value: [UInt8](repeating: 7, count: size), headers: [], timestamp: nil))
            indices.append(p)
            tokens.append(token)
        }
        // Exactly-once: no batch is taken while a transaction commits or rewinds; the event loop
        // keeps it (the consumer does not move) and tries again later.
        if exactlyOnce, phase != .open, !shuttingDown {
            let refused = inPlace ? !core.admitsRecords : core.admitUnlessCommitting(messages, at: now) == nil
            try require(refused, "a batch was taken in while a transaction was being committed or rewound")
            note("batch refused: a transaction commit or rewind is under way")
            return
        }
        for p in 0..<3 { partitions[p].position = positions[p] }
        consumed += messages.count

        // What the model expects, record by record, in order.
        var expected: [Expected] = []
        var rewinds: [WorkerCore.Rewind] = []
        for ((message, p), token) in zip(zip(messages, indices), tokens) {
            guard partitions[p].owned, !partitions[p].revoking, !shuttingDown, partitions[p].pendingRewinds.isEmpty else {
                expected.append(.dropped)
                reached.dropped += 1
                continue
            }
            if let next = partitions[p].nextAfterReceived, message.offset < next {
                rewinds.append(WorkerCore.Rewind(partition: Self.universe[p], offset: message.offset, previousNext: next))
                partitions[p].generation &+= 1
                offsetRewinds += 1
            }
            partitions[p].nextAfterReceived = message.offset + 1
            let key: Key? =
                switch ordering {
                case .key: Key(partition: Self.orderingPartition[p], token: token == 3 ? -1 : token)
                case .partition: Key(partition: Self.orderingPartition[p], token: -2)
                case .unordered: nil
                }
            let id = records.count
            let bytes = (Self.tokens[token]?.count ?? 0) + (message.value?.count ?? 0)
            records.append(
                Record(
                    partition: p, epoch: partitions[p].epoch, generation: partitions[p].generation, offset: message.offset, bytes: bytes,
                    key: key, message: message, state: .waiting))
            places[place(of: id)] = id
            partitions[p].tracked.append(id)
            inFlightRecords += 1
            inFlightBytes += bytes
            reached.records += 1
            // A lent batch's request may start behind running requests of its key that keep it open.
            let pipelines = inPlace && ordering == .key && message.topic == "requests"
            if let key {
                if holders[key] == nil {
                    holders[key] = Holder(running: [id], isOpen: pipelines)
                    expected.append(.started(id))
                } else if pipelines, holders[key]!.isOpen, waiting[key, default: []].isEmpty {
                    holders[key]!.running.append(id)
                    expected.append(.started(id))
                    pipelined += 1
                } else {
                    waiting[key, default: []].append(id)
                    expected.append(.queued(id))
                }
            } else {
                expected.append(.started(id))
            }
        }

        let effects: WorkerEffects
        if inPlace {
            // The lent batch's way (``DispatchWorker/take(_:output:)``): records that may start are
            // decided where they lie; those that wait are copied into work items.
            var table = WorkerCore.PartitionTable()
            let policy = core.policy
            let admissions = messages.map { message in
                let partition = TopicPartition(topic: message.topic, partition: message.partition)
                let key =
                    message.key.map { key in key.withUnsafeBytes { policy.key(of: partition, token: $0) } }
                    ?? policy.key(of: partition, token: nil)
                return WorkerCore.Admission(
                    partition: table.index(of: partition), offset: message.offset, key: key, bytes: WorkItem.bytes(of: message),
                    pipelines: message.topic == "requests")
            }
            var inPlaceEffects = WorkerEffects()
            let admitted = core.admit(admissions, of: table, at: now, into: &inPlaceEffects) { index, epoch, generation in
                WorkItem(
                    message: messages[index], epoch: epoch, generation: generation, orderingKey: admissions[index].key, bytes: admissions[index].bytes)
            }
            try require(inPlaceEffects.start.isEmpty, "a lent batch's admission started work items")
            // As ``DispatchWorker/take(_:output:)`` decides the records that started: a request
            // that does more than write one output (it waits, has outputs to follow, or goes the
            // owned way: a bit of `c`), and every record of another topic, closes its key; one
            // started behind a record of its batch that closed its key is requeued, as a copy.
            var closedKeys: [OrderingKey] = []
            var closedModelKeys: Set<Key> = []
            var requeued: [(id: Int, item: WorkItem)] = []
            var startedIDs: [Int] = []
            for (index, outcome) in admitted.enumerated() {
                switch (outcome, expected[index]) {
                case (.started(let epoch, let generation), .started(let id)):
                    try require(
                        epoch == records[id].epoch && generation == records[id].generation,
                        "\(describe(id)) started in epoch \(epoch), generation \(generation)")
                    records[id].inFlight = WorkerCore.InFlight(
                        epoch: epoch, generation: generation, offset: admissions[index].offset, key: admissions[index].key,
                        bytes: admissions[index].bytes)
                    guard let key = records[id].key, let orderingKey = admissions[index].key else {
                        startedIDs.append(id)
                        continue
                    }
                    if closedModelKeys.contains(key) {
                        let item = WorkItem(
                            message: messages[index], epoch: epoch, generation: generation, orderingKey: orderingKey,
                            bytes: admissions[index].bytes)
                        requeued.append((id, item))
                        continue
                    }
                    startedIDs.append(id)
                    let closes = messages[index].topic != "requests" || (step.c &* (2 &* index &+ 5)) >> 5 & 1 == 1
                    if closes, closedModelKeys.insert(key).inserted { closedKeys.append(orderingKey) }
                case (.queued, .queued), (.dropped, .dropped):
                    break
                default:
                    throw violation(
                        "record \(index) of the batch (\(messages[index].position)) was \(outcome), the model expected \(expected[index])")
                }
            }
            if !closedKeys.isEmpty || !requeued.isEmpty {
                let closing = core.closeKeys(closedKeys, requeuing: requeued.map(\.item))
                var expectedStarts: [Int] = []
                for key in closedModelKeys { holders[key]?.isOpen = false }
                for (id, item) in requeued {
                    let key = records[id].key!
                    records[id].item = item
                    records[id].inFlight = nil
                    holders[key]!.running.removeAll { $0 == id }
                    waiting[key, default: []].append(id)
                    pipelined -= 1
                    reached.requeued += 1
                    // Nothing runs before it any more: it starts now, alone.
                    if holders[key]!.running.isEmpty, holders[key]!.givenUp == 0 {
                        let next = waiting[key]!.removeFirst()
                        holders[key] = Holder(running: [next], isOpen: false)
                        expectedStarts.append(next)
                    }
                }
                note("closed \(closedModelKeys.count) keys, requeued \(requeued.map { describe($0.id) })")
                try started(closing.start, expected: expectedStarts)
            }
            for id in startedIDs { try start(id) }
            effects = inPlaceEffects
        } else {
            guard let owned = exactlyOnce ? core.admitUnlessCommitting(messages, at: now) : core.admit(messages, at: now) else {
                throw violation("a batch was refused with no transaction commit under way")
            }
            let expectedStarts = expected.compactMap { if case .started(let id) = $0 { id } else { nil } }
            try started(owned.start, expected: expectedStarts)
            effects = owned
        }
        try require(effects.rewinds == rewinds, "the rewinds reported were \(effects.rewinds), the model expected \(rewinds)")
        note("admitted \(zip(messages, expected).map { "\($0.position): \($1)" }.joined(separator: ", "))\(inPlace ? " (lent)" : "")")
        try apply(effects, flow: .up)
    }

    /// Records the core started (`items`), which must be the ones the model expects, in order.
    func started(_ items: [WorkItem], expected: [Int]) throws(Violation) {
        var ids: [Int] = []
        for item in items {
            guard let p = Self.universe.firstIndex(of: item.partition),
                let id = places[Place(partition: p, epoch: item.epoch, generation: item.generation, offset: item.message.offset)]
            else {
                throw violation("the core started a record the model never took in: \(item.message.position), epoch \(item.epoch)")
            }
            ids.append(id)
        }
        try require(ids == expected, "the core started \(ids.map(describe)), the model expected \(expected.map(describe))")
        for (item, id) in zip(items, ids) {
            if records[id].item == nil { records[id].item = item }
            try start(id)
        }
    }

    /// A record starts: it must be waiting (never started before, never dropped), and follow the
    /// last record of its key from the same place in offset order.
    func start(_ id: Int) throws(Violation) {
        try require(records[id].state == .waiting, "\(describe(id)) started while \(records[id].state)")
        if let key = records[id].key {
            try require(
                holders[key]?.running.contains(id) == true, "\(describe(id)) started while its key is held by \(String(describing: holders[key]))")
            let place = place(of: id)
            if let last = lastStart[key], last.partition == place.partition, last.epoch == place.epoch, last.generation == place.generation {
                try require(last.offset < place.offset, "\(describe(id)) started after offset \(last.offset) of its key")
            }
            lastStart[key] = place
        }
        records[id].state = .running
        running.append(id)
    }

    // MARK: Publishing and finishing

    func publish(_ step: CoreStep) throws(Violation) {
        guard !running.isEmpty else { return }
        let id = running.remove(at: step.a % running.count)
        let outputBytes = step.c
        if records[id].item == nil || step.b % 2 == 1 {
            // Decided in place (a record started in place, or one copied out and decided on its
            // copy): its outputs' bytes are held apart from the record.
            if records[id].inFlight == nil, let item = records[id].item {
                records[id].inFlight = WorkerCore.InFlight(
                    epoch: item.epoch, generation: item.generation, offset: item.message.offset, key: item.orderingKey, bytes: item.bytes)
            }
            records[id].inPlace = true
            records[id].state = .publishing
            records[id].outputBytes = outputBytes
            inFlightBytes += outputBytes
            publishing.append(id)
            if outputBytes > 0 { try apply(core.holding(outputBytes: outputBytes), flow: .up) }
            note("\(describe(id)) publishes in place, holding \(outputBytes) bytes")
        } else {
            let item = records[id].item!
            let (isCurrent, effects) = core.beginPublishing([item], outputBytes: outputBytes)
            try require(isCurrent == [self.isCurrent(id)], "\(describe(id)) is current: \(isCurrent), the model says \(self.isCurrent(id))")
            records[id].inPlace = false
            records[id].currentAtPublish = isCurrent[0]
            records[id].state = .publishing
            records[id].outputBytes = outputBytes
            inFlightBytes += outputBytes
            publishing.append(id)
            note("\(describe(id)) publishes, holding \(outputBytes) bytes")
            try apply(effects, flow: .up)
        }
    }

    func acknowledge(_ step: CoreStep) throws(Violation) {
        guard !publishing.isEmpty else { return }
        let id = publishing.remove(at: step.a % publishing.count)
        // Giving up: exactly-once, an output of the transaction failed; at-least-once, the worker
        // is stopping (rare: its keys stay taken).
        let givesUp = step.b == 6 && (exactlyOnce || step.c < 64)
        if records[id].inPlace {
            if givesUp {
                try replay(id)
            } else {
                try finishInPlace([id])
            }
        } else {
            try finishOwned([id], givingUp: givesUp ? [id] : [])
        }
    }

    func acknowledgeAll() throws(Violation) {
        guard !publishing.isEmpty else { return }
        let all = publishing
        publishing = []
        let owned = all.filter { !records[$0].inPlace }
        let inPlace = all.filter { records[$0].inPlace }
        if !owned.isEmpty { try finishOwned(owned, givingUp: []) }
        if !inPlace.isEmpty { try finishInPlace(inPlace) }
    }

    /// The owned way (``DispatchWorker/publish(_:)``): records whose partition left before their
    /// outputs were produced, or that were given up once it left, are stale; the others are
    /// published, with a result or given up.
    func finishOwned(_ ids: [Int], givingUp: Set<Int>) throws(Violation) {
        var stale: [Int] = []
        var published: [Int] = []
        for id in ids {
            if !records[id].currentAtPublish {
                stale.append(id)
            } else if givingUp.contains(id) {
                let isCurrent = core.isCurrent(records[id].item!)
                try require(isCurrent == self.isCurrent(id), "\(describe(id)) is current: \(isCurrent), the model says \(!isCurrent)")
                if isCurrent { published.append(id) } else { stale.append(id) }
            } else {
                published.append(id)
            }
        }
        let outputBytes = ids.reduce(0) { $0 + records[$1].outputBytes }
        let effects = core.finish(
            published.map { WorkerCore.Published(item: records[$0].item!, result: givingUp.contains($0) ? nil : WorkerCoreTests.delivered) },
            stale: stale.map { records[$0].item! }, outputBytes: outputBytes)
        // The core finishes the stale records first, then the published ones, in order.
        var expectedStarts: [Int] = []
        for id in stale { try end(id, as: .stale, starting: &expectedStarts) }
        for id in published { try end(id, as: givingUp.contains(id) ? .givenUp : .finished, starting: &expectedStarts) }
        note(
            "finished \(published.map { "\(describe($0))\(givingUp.contains($0) ? " (given up)" : "")" }) stale \(stale.map(describe))"
        )
        try started(effects.start, expected: expectedStarts)
        try apply(effects, flow: .down)
    }

    /// Records decided in place are acknowledged (``DispatchWorker/completeInPlace(_:)``).
    func finishInPlace(_ ids: [Int]) throws(Violation) {
        var table = WorkerCore.PartitionTable()
        let batch = ids.map { id in
            (partition: table.index(of: Self.universe[records[id].partition]), record: records[id].inFlight!, labels: Self.labels)
        }
        let outputBytes = ids.reduce(0) { $0 + records[$1].outputBytes }
        let effects = core.finishInPlace(batch, of: table, outputs: [:], finishedTopic: "requests", outputBytes: outputBytes)
        var expectedStarts: [Int] = []
        for id in ids { try end(id, as: .finished, starting: &expectedStarts) }
        note("finished in place \(ids.map(describe))")
        try started(effects.start, expected: expectedStarts)
        try apply(effects, flow: .down)
    }

    /// A record decided in place whose output failed goes the owned way, as a work item
    /// (``DispatchWorker`` `replay`); exactly-once, its transaction is to be rewound.
    func replay(_ id: Int) throws(Violation) {
        let held = records[id].outputBytes
        records[id].item = WorkItem(message: records[id].message, inFlight: records[id].inFlight!, replaying: true)
        records[id].inPlace = false
        records[id].outputBytes = 0
        records[id].state = .running
        inFlightBytes -= held
        running.append(id)
        if exactlyOnce { rewindRequested = true }
        // Written again the owned way: later requests of its key wait for it from now on.
        if let key = records[id].key, let orderingKey = records[id].inFlight?.key {
            holders[key]?.isOpen = false
            let effects = core.closeKeys([orderingKey], requeuing: [])
            try require(effects.start.isEmpty, "closing a key started records")
        }
        note("\(describe(id)) failed in place: replayed the owned way")
        if held > 0 { try apply(core.holding(outputBytes: -held), flow: .down) }
    }

    /// A record leaves flight: its bytes go, its key passes to the next record waiting (whose
    /// start the caller expects), or stays taken when it was given up.
    func end(_ id: Int, as state: State, starting: inout [Int]) throws(Violation) {
        let p = records[id].partition
        if state == .finished, isCurrent(id) {
            partitions[p].everDone.insert(records[id].offset)
        }
        records[id].state = state
        inFlightRecords -= 1
        inFlightBytes -= records[id].bytes + records[id].outputBytes
        records[id].outputBytes = 0
        switch state {
        case .stale:
            staleCount += 1
            reached.stale += 1
        case .givenUp:
            reached.givenUp += 1
            if exactlyOnce { rewindRequested = true }
        default: break
        }
        guard let key = records[id].key else { return }
        try require(
            holders[key]?.running.contains(id) == true, "\(describe(id)) ended while its key was held by \(String(describing: holders[key]))")
        holders[key]!.running.removeAll { $0 == id }
        if state == .givenUp {
            holders[key]!.givenUp += 1
            holders[key]!.isOpen = false
        }
        guard holders[key]!.running.isEmpty, holders[key]!.givenUp == 0 else { return }
        if var queue = waiting[key], !queue.isEmpty {
            let next = queue.removeFirst()
            waiting[key] = queue
            holders[key] = Holder(running: [next], isOpen: false)
            starting.append(next)
        } else {
            holders[key] = nil
        }
    }

    // MARK: Rebalances

    func revoke(_ step: CoreStep) throws(Violation) {
        let revoked = selected(step.a) { $0.owned && !$0.revoking }
        let (effects, revocation) = core.beginRevoking(revoked.map { Self.universe[$0] }, dropsWaiting: !exactlyOnce)
        let epochs = Dictionary(uniqueKeysWithValues: revoked.map { (Self.universe[$0], partitions[$0].epoch) })
        try require(revocation.epochs == epochs, "the revocation's epochs are \(revocation.epochs), the model's \(epochs)")
        for p in revoked { partitions[p].revoking = true }
        // At-least-once, the waiting records are dropped (a later owner processes them);
        // exactly-once, they run.
        if !exactlyOnce { dropWaiting(of: Set(revoked)) }
        revocations.append(revocation)
        note("revoking \(revoked.map { Self.universe[$0] })")
        try apply(effects, flow: .down)
    }

    func completeRevocation(_ step: CoreStep) throws(Violation) {
        guard !revocations.isEmpty else { return }
        let index = step.a % revocations.count
        let revocation = revocations[index]
        let revoked = revocation.partitions.map { Self.universe.firstIndex(of: $0)! }
        // As the core counts it: the revoked partitions owned now, in whatever assignment.
        let drained = revoked.allSatisfy { p in !partitions[p].owned || inFlight(p) == 0 }
        try require(core.isDrained(revocation.partitions) == drained, "the revoked partitions are drained: \(!drained), the model says \(drained)")
        if exactlyOnce {
            // The revocation commits the transaction (every partition's work) once everything
            // is drained, and only then releases the partitions.
            guard drained, phase == .open, !rewindRequested, core.isDrained(nil) else { return }
            if !core.commitPlan().isEmpty {
                core.beginTransactionCommit()
                phase = .committing
                try commitTransaction(failing: false)
            }
        } else {
            // At the drain limit the revocation goes on, drained or not: the records still in
            // flight become stale.
            guard drained || step.b == 7 else { return }
            let plan = core.commitPlan(for: revocation.partitions)
            try checkPlan(plan, of: (0..<3).map { revoked.contains($0) })
            if !plan.isEmpty { try committed(plan) }
        }
        revocations.remove(at: index)
        // Invariant 5: a drained revocation leaves nothing of its partitions in flight.
        let released = revoked.filter { partitions[$0].owned && partitions[$0].epoch == revocation.epochs[Self.universe[$0]] }
        if drained {
            for p in released {
                try require(inFlight(p) == 0, "\(Self.universe[p]) was revoked and drained with records still in flight")
            }
            reached.revocationsDrained += 1
        }
        let effects = core.completeRevocation(revocation)
        try require(
            Set(effects.release ?? [TopicPartition(topic: "none", partition: -1)]) == Set(released.map { Self.universe[$0] }),
            "the revocation released \(String(describing: effects.release)), the model expected \(released.map { Self.universe[$0] })")
        for p in released { remove(p) }
        note("revocation completed\(drained ? "" : " at the drain limit"): released \(released.map { Self.universe[$0] })")
        try apply(effects, flow: .down)
    }

    func lose(_ step: CoreStep) throws(Violation) {
        let lost = selected(step.a) { $0.owned }
        guard !lost.isEmpty else { return }
        let effects = core.lose(lost.map { Self.universe[$0] })
        for p in lost { remove(p) }
        note("lost \(lost.map { Self.universe[$0] })")
        try apply(effects, flow: .down)
        // Exactly-once: the open transaction holds outputs of the lost partitions' records,
        // which their new owner writes again: the worker stops.
        if exactlyOnce { stopped = true }
    }

    func assign(_ assigned: [Int]) throws(Violation) {
        guard !assigned.isEmpty else { return }
        core.assign(assigned.map { Self.universe[$0] })
        for p in assigned {
            guard let state = core.partitions[Self.universe[p]] else { throw violation("\(Self.universe[p]) was assigned but is not owned") }
            try require(state.epoch > partitions.map(\.epoch).max()!, "\(Self.universe[p]) was assigned an old epoch")
            partitions[p].owned = true
            partitions[p].epoch = state.epoch
            partitions[p].revoking = false
            partitions[p].generation = 0
            partitions[p].nextAfterReceived = nil
            partitions[p].tracked = []
            partitions[p].coreCommitted = nil
            // A new owner starts from the group's committed offset.
            partitions[p].position = partitions[p].brokerCommitted
        }
        note("assigned \(assigned.map { Self.universe[$0] })")
    }

    /// A partition leaves: its waiting records are dropped; its running ones will be stale.
    func remove(_ p: Int) {
        dropWaiting(of: [p])
        partitions[p].owned = false
        partitions[p].revoking = false
        partitions[p].tracked = []
    }

    func dropWaiting(of dropped: Set<Int>) {
        for (key, queue) in waiting where !queue.isEmpty {
            var kept: [Int] = []
            for id in queue {
                if dropped.contains(records[id].partition) {
                    records[id].state = .dropped
                    inFlightRecords -= 1
                    inFlightBytes -= records[id].bytes
                    reached.dropped += 1
                } else {
                    kept.append(id)
                }
            }
            waiting[key] = kept
        }
    }

    // MARK: Commits

    func planCommit() throws(Violation) {
        guard !exactlyOnce else { return }
        let plan = core.commitPlan()
        guard !plan.isEmpty else { return }
        sentCommits.append(plan)
        note("commit sent: \(plan.map { "\($0.topicPartition)@\($0.offset)" })")
    }

    func acknowledgeCommit(_ step: CoreStep) throws(Violation) {
        guard !sentCommits.isEmpty else { return }
        let plan = sentCommits.remove(at: step.a % sentCommits.count)
        if step.b % 2 == 1 {
            core.commitFailed()
            note("commit failed: \(plan.map { "\($0.topicPartition)@\($0.offset)" })")
        } else {
            try committed(plan)
        }
    }

    /// At-least-once: the group took `plan`; every offset below it must have been done.
    func committed(_ plan: [TopicPartitionOffset]) throws(Violation) {
        core.committed(plan)
        reached.commits += 1
        note("committed \(plan.map { "\($0.topicPartition)@\($0.offset)" })")
        for entry in plan {
            let p = Self.universe.firstIndex(of: entry.topicPartition)!
            partitions[p].brokerCommitted = entry.offset
            // The core records it on the partition it owns now, whatever its epoch.
            if partitions[p].owned { partitions[p].coreCommitted = entry.offset }
            for offset in 0..<entry.offset where Self.exists(offset, in: p) {
                try require(
                    partitions[p].everDone.contains(offset),
                    "the group's committed offset of \(entry.topicPartition) is now \(entry.offset), but offset \(offset) was never done")
            }
        }
    }

    func beginTransactionCommit() throws(Violation) {
        guard exactlyOnce, phase == .open, !rewindRequested, !core.commitPlan().isEmpty else { return }
        core.beginTransactionCommit()
        phase = .committing
        note("transaction commit begins")
    }

    /// Exactly-once: everything is drained; the plan goes to the transaction, which commits (or
    /// fails, and is rewound instead).
    func commitTransaction(failing: Bool) throws(Violation) {
        try require(core.isDrained(nil) && (0..<3).allSatisfy { inFlight($0) == 0 }, "a transaction commit with records in flight")
        let plan = core.commitPlan()
        try checkPlan(plan, of: Self.all)
        guard !failing else {
            core.commitFailed()
            rewindRequested = true
            note("transaction commit failed: \(plan.map { "\($0.topicPartition)@\($0.offset)" })")
            return
        }
        core.transactionCommitted(plan)
        core.endTransactionCommit()
        phase = .open
        reached.commits += 1
        note("transaction committed \(plan.map { "\($0.topicPartition)@\($0.offset)" })")
        for entry in plan {
            let p = Self.universe.firstIndex(of: entry.topicPartition)!
            partitions[p].brokerCommitted = entry.offset
            partitions[p].coreCommitted = entry.offset
        }
        for p in 0..<3 where partitions[p].owned {
            for id in partitions[p].tracked where records[id].sinceCommit {
                records[id].sinceCommit = false
                guard records[id].state == .finished else { continue }
                try require(
                    records[id].offset < partitions[p].brokerCommitted,
                    "\(describe(id)) is done in the committed transaction but above its partition's committed offset "
                        + "\(partitions[p].brokerCommitted): its outputs would be written again")
                partitions[p].committedOutputs[records[id].offset, default: 0] += 1
            }
        }
        // Exactly once: every offset below a partition's committed offset was done in exactly one
        // committed transaction, and none above.
        for p in 0..<3 {
            for (offset, times) in partitions[p].committedOutputs {
                try require(times == 1, "offset \(offset) of \(Self.universe[p]) was committed \(times) times")
                try require(
                    offset < partitions[p].brokerCommitted,
                    "offset \(offset) of \(Self.universe[p]) was committed above the committed offset \(partitions[p].brokerCommitted)")
            }
            for offset in 0..<partitions[p].brokerCommitted where Self.exists(offset, in: p) {
                try require(
                    partitions[p].committedOutputs[offset] != nil,
                    "the committed offset of \(Self.universe[p]) is \(partitions[p].brokerCommitted), but offset \(offset) is in no committed transaction")
            }
        }
    }

    func beginRewind() throws(Violation) {
        guard exactlyOnce, rewindRequested, phase != .rewinding else { return }
        let effects = core.beginRewind()
        phase = .rewinding
        reached.transactionRewinds += 1
        dropWaiting(of: Set((0..<3).filter { partitions[$0].owned }))
        note("rewind begins")
        try apply(effects, flow: .down)
    }

    func completeRewind() throws(Violation) {
        guard exactlyOnce, phase == .rewinding, core.isDrained(nil) else { return }
        let targets = core.completeRewind()
        // Each partition that took records in since the last commit goes back to the first of
        // them: where the last commit left it.
        var expected: [TopicPartitionOffset] = []
        for p in 0..<3 where partitions[p].owned {
            let taken = partitions[p].tracked.filter { records[$0].sinceCommit }
            for id in taken { records[id].sinceCommit = false }
            guard let first = taken.map({ records[$0].offset }).min() else { continue }
            try require(
                first == Self.existing(from: partitions[p].brokerCommitted, in: p),
                "\(Self.universe[p]) goes back to \(first), but its last commit left it at \(partitions[p].brokerCommitted)")
            expected.append(TopicPartitionOffset(topic: Self.universe[p].topic, partition: Self.universe[p].partition, offset: first))
            partitions[p].generation &+= 1
            partitions[p].nextAfterReceived = nil
            partitions[p].tracked = []
            partitions[p].pendingRewinds.append(first)
        }
        try require(Set(targets) == Set(expected), "the rewind went back to \(targets), the model expected \(expected)")
        for (key, holder) in holders where holder.givenUp > 0 {
            try require(waiting[key, default: []].isEmpty, "records wait behind a given-up key at the rewind's end")
            try require(holder.running.isEmpty, "records of a given-up key still run at the rewind's end")
            holders[key] = nil
        }
        core.endTransactionCommit()
        phase = .open
        rewindRequested = false
        note("rewound to \(targets.map { "\($0.topicPartition)@\($0.offset)" })")
    }

    func reportRewound(_ p: Int) throws(Violation) {
        guard exactlyOnce else { return }
        core.rewound([Self.universe[p]])
        guard !partitions[p].pendingRewinds.isEmpty else {
            note("the consumer reports a rewind of \(Self.universe[p]) that is not under way: nothing changes")
            return
        }
        let target = partitions[p].pendingRewinds.removeFirst()
        // The seek moved the partition where it is assigned (one not assigned any more starts
        // from the group's committed offset when it comes back).
        if partitions[p].owned { partitions[p].position = target }
        note("the consumer reports the rewind of \(Self.universe[p]) to \(target)")
    }

    // MARK: The end

    /// Lets every record finish, completes what is under way, commits, and checks that nothing
    /// is left: every record ended or was dropped (or waits behind a key given up at-least-once,
    /// whose worker stops), and nothing is in flight or held.
    func settle() throws(Violation) {
        var rounds = 0
        while !running.isEmpty || !publishing.isEmpty {
            rounds += 1
            try require(rounds < 10_000, "records never stop starting")
            // Each call is checked as it is made (flow, intake, starts); the rest once at the end.
            if !publishing.isEmpty {
                try acknowledgeAll()
            } else {
                while !running.isEmpty { try publish(CoreStep(.publish, 0, 0, 0)) }
            }
        }
        if exactlyOnce {
            if phase == .committing, !rewindRequested { try commitTransaction(failing: false) }
            if rewindRequested {
                try beginRewind()
                try completeRewind()
            }
            for _ in revocations.indices { try completeRevocation(CoreStep(.completeRevocation, 0, 0, 0)) }
            try require(revocations.isEmpty, "revocations could not complete once everything finished")
            try beginTransactionCommit()
            if phase == .committing { try commitTransaction(failing: false) }
        } else {
            while !revocations.isEmpty { try completeRevocation(CoreStep(.completeRevocation, 0, 7, 0)) }
            let plan = core.commitPlan()
            if !plan.isEmpty { try committed(plan) }
        }
        try checkAll()
        var stuck = 0
        for id in records.indices {
            switch records[id].state {
            case .finished, .givenUp, .stale, .dropped: continue
            case .waiting:
                // At-least-once, a record given up leaves its key taken: the worker is stopping.
                try require(
                    !exactlyOnce && records[id].key.map { (holders[$0]?.givenUp ?? 0) > 0 } == true,
                    "\(describe(id)) is still waiting at the end")
                stuck += 1
            case .running, .publishing:
                throw violation("\(describe(id)) is still \(records[id].state) at the end")
            }
        }
        try require(core.inFlight == stuck, "\(core.inFlight) records in flight at the end, the model counts \(stuck)")
        if stuck == 0 {
            try require(core.flow.bytes == 0 && !core.isIntakeHeld, "nothing is in flight, yet \(core.flow.bytes) bytes are, or the intake is held")
        }
        try require(core.tally.consumed == consumed, "the core counts \(core.tally.consumed) records consumed, the model \(consumed)")
        try require(core.tally.staleResults == staleCount, "the core counts \(core.tally.staleResults) stale results, the model \(staleCount)")
        try require(core.tally.offsetRewinds == offsetRewinds, "the core counts \(core.tally.offsetRewinds) rewinds, the model \(offsetRewinds)")
        try require(core.tally.pipelined == pipelined, "the core counts \(core.tally.pipelined) records pipelined, the model \(pipelined)")
        reached.offsetRewinds += offsetRewinds
        reached.pipelined += pipelined
    }

    // MARK: Checks

    /// How flow changed in a call: only up (records or bytes taken), or only down.
    enum FlowChange {
        case up
        case down
    }

    /// Applies a call's effects as the service does (the intake's decisions, in their order) and
    /// checks flow control against the model: its counts, and whether it holds (held from the
    /// moment either limit is reached, restarted once both are back at their low-water marks).
    func apply(_ effects: WorkerEffects, flow change: FlowChange?) throws(Violation) {
        if let intake = effects.intake {
            try require(intake.sequence == intakeSequence + 1, "intake decision \(intake.sequence) after \(intakeSequence)")
            try require(intake.held != appliedIntake, "an intake decision that changes nothing")
            intakeSequence = intake.sequence
            appliedIntake = intake.held
            if intake.held { reached.holds += 1 }
        }
        let flow = core.flow
        switch change {
        case .up: flowHolds = flowHolds || inFlightRecords >= flow.maxRecords || inFlightBytes >= flow.maxBytes
        case .down: flowHolds = flowHolds && !(inFlightRecords <= flow.resumeRecords && inFlightBytes <= flow.resumeBytes)
        case nil: break
        }
        try require(
            flow.records == inFlightRecords && flow.bytes == inFlightBytes,
            "flow control counts \(flow.records) records and \(flow.bytes) bytes, the model \(inFlightRecords) and \(inFlightBytes)")
        try require(flow.isHolding == flowHolds, "flow control holds: \(flow.isHolding), the limits say \(flowHolds)")
        let held = flowHolds && !shuttingDown
        try require(core.isIntakeHeld == held, "the core's intake is held: \(core.isIntakeHeld), the limits say \(held)")
        try require(appliedIntake == held, "the intake applied is held: \(appliedIntake), the limits say \(held)")
    }

    /// After every step: the partitions as the model knows them, their records in flight, flow
    /// control, and the commit plan.
    func checkAll() throws(Violation) {
        // One pass over the core's partitions (a lookup per partition hashed its topic's name).
        var owned = 0
        var drained = true
        for (partition, state) in core.partitions {
            guard let p = Self.universe.firstIndex(of: partition), partitions[p].owned else {
                throw violation("\(partition) is owned, the model says it is not")
            }
            owned += 1
            try require(state.epoch == partitions[p].epoch, "\(partition) is in epoch \(state.epoch), the model says \(partitions[p].epoch)")
            try require(state.isRevoking == partitions[p].revoking, "\(partition) is revoking: \(state.isRevoking)")
            let inFlight = inFlight(p)
            try require(state.inProgress == inFlight, "\(partition) has \(state.inProgress) records in progress, the model \(inFlight)")
            drained = drained && inFlight == 0
        }
        try require(owned == partitions.count { $0.owned }, "the core owns \(owned) partitions, the model \(partitions.count { $0.owned })")
        try require(core.isDrained(nil) == drained, "the core is drained: \(!drained), the model says \(drained)")
        try apply(WorkerEffects(), flow: nil)
        try checkPlan(core.commitPlan(), of: Self.all)
    }

    static let all = [true, true, true]

    /// Invariant 1: the plan passes no record that is not done, and offers exactly what the model
    /// computes: the lowest offset not done over every generation (or the position after the
    /// last one received), when it differs from what was committed.
    /// - Parameter subset: whether each partition is asked for.
    func checkPlan(_ plan: [TopicPartitionOffset], of subset: [Bool]) throws(Violation) {
        var offered: [Int64?] = [nil, nil, nil]
        for entry in plan {
            guard let p = Self.universe.firstIndex(of: entry.topicPartition), subset[p], offered[p] == nil else {
                throw violation("the commit plan \(plan) offers a partition twice or outside \(subset)")
            }
            offered[p] = entry.offset
        }
        for p in 0..<3 where subset[p] {
            let expected = partitions[p].owned ? committable(p) : nil
            let offers = expected != nil && expected != partitions[p].coreCommitted
            guard let offset = offered[p] else {
                try require(!offers, "the commit plan leaves out \(Self.universe[p]) at \(expected ?? -1)")
                continue
            }
            for id in partitions[p].tracked where records[id].offset < offset && records[id].state != .finished {
                throw violation("the commit plan offers \(Self.universe[p])@\(offset), past \(describe(id)), which is \(records[id].state)")
            }
            try require(offers && offset == expected, "the commit plan offers \(Self.universe[p])@\(offset), the model \(expected ?? -1)")
        }
    }

    /// The offset the model would commit for partition `p`.
    func committable(_ p: Int) -> Int64? {
        var current: Int64?
        var earlier: Int64?
        for id in partitions[p].tracked where records[id].state != .finished {
            let offset = records[id].offset
            if records[id].generation == partitions[p].generation {
                current = min(current ?? offset, offset)
            } else {
                earlier = min(earlier ?? offset, offset)
            }
        }
        guard let last = current ?? partitions[p].nextAfterReceived else { return earlier }
        guard let earlier else { return last }
        return min(last, earlier)
    }

    /// Records of partition `p`'s assignment in flight (waiting, running or publishing).
    func inFlight(_ p: Int) -> Int {
        partitions[p].tracked.reduce(0) { count, id in
            switch records[id].state {
            case .waiting, .running, .publishing: count + 1
            default: count
            }
        }
    }

    func isCurrent(_ id: Int) -> Bool {
        partitions[records[id].partition].owned && partitions[records[id].partition].epoch == records[id].epoch
    }

    /// The owned partitions among `a % 3` (`a >= 3`: all of them) that match.
    func selected(_ a: Int, where matches: (Partition) -> Bool) -> [Int] {
        (a >= 3 ? Array(0..<3) : [a % 3]).filter { matches(partitions[$0]) }
    }

    func place(of id: Int) -> Place {
        Place(partition: records[id].partition, epoch: records[id].epoch, generation: records[id].generation, offset: records[id].offset)
    }

    func describe(_ id: Int) -> String {
        let record = records[id]
        let token = record.message.key.map { String(decoding: Array($0), as: UTF8.self) } ?? "null"
        return "\(Self.universe[record.partition])@\(record.offset) (key \(token), epoch \(record.epoch), generation \(record.generation))"
    }

    /// Marks that the step did something (the checks after it run only then), and traces it.
    func note(_ line: @autoclosure () -> String) {
        acted = true
        trace?.lines.append("  " + line())
    }

    /// The lines of a trace.
    final class Trace {
        var lines: [String] = []
    }

    func violation(_ message: String) -> Violation {
        Violation(message: "step \(stepIndex): \(message)")
    }

    func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(Violation) {
        if !condition { throw violation(message()) }
    }
}
