import Dispatcher
import Foundation
import Kafka
import Notifications
import Testing

@testable import DispatcherService
import Records

/// The worker's core as plain values, without Kafka: assignments and epochs, revocations while
/// records wait, rewinds, commits while the intake is held, the intake's decisions, one count of
/// each outcome, and stalls.
@Suite("Worker core as values")
struct WorkerCoreTests {
    let partition = TopicPartition(topic: "requests", partition: 3)
    let start = ContinuousClock.now

    func message(_ offset: Int64, key: String = "a", in partition: TopicPartition? = nil, bytes: Int = 3) -> KafkaMessage {
        let partition = partition ?? self.partition
        return KafkaMessage(
            topic: partition.topic, partition: partition.partition, offset: offset, key: Array(key.utf8),
            value: Array(repeating: 1, count: bytes), headers: [], timestamp: nil)
    }

    func core(ordering: OrderingMode = .unordered, maxRecords: Int = 100, maxBytes: Int = 1 << 20) -> WorkerCore {
        WorkerCore(flow: FlowControl(maxRecords: maxRecords, maxBytes: maxBytes, resumeRatio: 0.5), ordering: ordering)
    }

    /// Admits one record and returns the item that starts.
    func start(_ offset: Int64, key: String = "a", in core: inout WorkerCore) throws -> WorkItem {
        let effects = core.admit([message(offset, key: key)], at: start)
        return try #require(effects.start.first, "offset \(offset) did not start")
    }

    /// A result that counts as a delivery with one output.
    static let delivered = DispatchResult(
        .deadLettered(
            DeadLetter(
                record: RequestRecord(key: nil, headers: [], value: [], source: TopicPartitionOffset(topic: "requests", partition: 3, offset: 0)),
                rejection: Rejection(.badPriority, "test"), failedAt: Date(timeIntervalSince1970: 0), consumerGroup: "g")),
        topics: TopicSettings())

    func done(_ items: WorkItem...) -> [WorkerCore.Published] {
        items.map { WorkerCore.Published(item: $0, result: Self.delivered) }
    }

    // MARK: Pipelining

    /// The ordering key of device token `token` in `partition`, as `core` orders it.
    func orderingKey(_ token: String = "a", in core: WorkerCore) -> OrderingKey? {
        Array(token.utf8).withUnsafeBytes { core.policy.key(of: partition, token: $0) }
    }

    /// Admits `offsets` of `partition` as a lent batch's requests (``WorkerCore/Admission/pipelines``),
    /// all with key `key`.
    func admitLent(_ offsets: [Int64], key: String = "a", in core: inout WorkerCore) -> [WorkerCore.Admitted] {
        var table = WorkerCore.PartitionTable()
        let index = table.index(of: partition)
        let orderingKey = orderingKey(key, in: core)
        let admissions = offsets.map {
            WorkerCore.Admission(partition: index, offset: $0, key: orderingKey, bytes: 10, pipelines: true)
        }
        var effects = WorkerEffects()
        return core.admit(admissions, of: table, at: start, into: &effects) { position, epoch, generation in
            WorkItem(message: message(offsets[position], key: key), epoch: epoch, generation: generation, orderingKey: orderingKey)
        }
    }

    @Test("ordering key: a lent batch's requests start behind running ones of their device; a key closed, or ordering by partition, queues them")
    func pipelinedRequests() throws {
        var core = core(ordering: .key)
        core.assign([partition])
        let first = admitLent([10, 11], in: &core)
        #expect(first.allSatisfy { if case .started = $0 { true } else { false } }, "\(first)")
        #expect(core.tally.pipelined == 1)
        // The next batch's request of the same device starts too: nothing was closed.
        let second = admitLent([12], in: &core)
        #expect(second.count == 1 && second.allSatisfy { if case .started = $0 { true } else { false } })
        #expect(core.tally.pipelined == 2)
        // Offset 12 waits on an extension: its key closes, and the next request queues behind it.
        let key = try #require(orderingKey(in: core))
        #expect(core.closeKeys([key], requeuing: []).start.isEmpty)
        #expect(admitLent([13], in: &core) == [.queued])
        #expect(core.tally.pipelined == 2)

        // Ordered by partition, one request at a time, lent or not.
        var byPartition = self.core(ordering: .partition)
        byPartition.assign([partition])
        let admitted = admitLent([10, 11], in: &byPartition)
        #expect(admitted.last == .queued)
        #expect(byPartition.tally.pipelined == 0)
    }

    @Test("a request started behind one of its batch that closed the key is requeued; the queue starts it once every request before it finished")
    func requeuedRequest() throws {
        var core = core(ordering: .key)
        core.assign([partition])
        _ = admitLent([10, 11, 12], in: &core)
        let key = try #require(orderingKey(in: core))
        let records = (10...12).map { WorkerCore.InFlight(epoch: 1, generation: 0, offset: $0, key: key, bytes: 10) }
        // 10 writes one output, 11 waits (closes the key): 12 is requeued.
        let requeued = WorkItem(message: message(12), epoch: 1, generation: 0, orderingKey: key, bytes: 10)
        #expect(core.closeKeys([key], requeuing: [requeued]).start.isEmpty)
        #expect(core.tally.pipelined == 1, "12 no longer counts as pipelined")
        var table = WorkerCore.PartitionTable()
        let index = table.index(of: partition)
        let labels = DispatchResult.Labels(outcome: .none, launch: nil, hasExtensionReport: false)
        let afterTen = core.finishInPlace([(index, records[0], labels)], of: table, outputs: [:], finishedTopic: "requests", outputBytes: 0)
        #expect(afterTen.start.isEmpty, "11 still runs")
        let afterEleven = core.finishInPlace([(index, records[1], labels)], of: table, outputs: [:], finishedTopic: "requests", outputBytes: 0)
        #expect(afterEleven.start.map(\.offset) == [12])
        #expect(core.inFlight == 1)
    }

    @Test("a request given up closes its key: a later request of its device waits, even behind a request that kept it open")
    func givenUpCloses() throws {
        var core = core(ordering: .key)
        core.assign([partition])
        _ = admitLent([10, 11], in: &core)
        #expect(core.tally.pipelined == 1)
        let key = orderingKey(in: core)
        let item = WorkItem(message: message(10), epoch: 1, generation: 0, orderingKey: key, bytes: 10)
        _ = core.finish([WorkerCore.Published(item: item, result: nil)])
        #expect(admitLent([12], in: &core) == [.queued])
    }

    // MARK: Epochs and revocation

    @Test("a revocation that drained while its partition was lost and assigned again removes nothing")
    func revocationByEpoch() throws {
        var core = core()
        core.assign([partition])
        _ = try start(10, in: &core)
        let (_, revocation) = core.beginRevoking([partition])
        #expect(revocation.epochs.count == 1)
        // Lost during the drain, then assigned again: a new epoch.
        _ = core.lose([partition])
        core.assign([partition])
        let fresh = try start(20, in: &core)
        let effects = core.completeRevocation(revocation)
        #expect(effects.release == [], "the old revocation must not release the new assignment, yet it answers the consumer")
        #expect(core.partitions[partition] != nil)
        #expect(core.isCurrent(fresh))
        _ = core.finish(done(fresh))
        #expect(core.commitPlan().map(\.offset) == [21])
    }

    @Test("a revocation whose epoch still holds removes the partition and releases it")
    func revocationSameEpoch() throws {
        var core = core()
        core.assign([partition])
        let item = try start(10, in: &core)
        let (_, revocation) = core.beginRevoking([partition])
        #expect(!core.isDrained(revocation.partitions))
        _ = core.finish(done(item))
        #expect(core.isDrained(revocation.partitions))
        let effects = core.completeRevocation(revocation)
        #expect(effects.release == [partition])
        #expect(core.partitions[partition] == nil)
    }

    @Test("revocation while records wait: the waiting ones are dropped uncommitted, the running one finishes and is committed")
    func revocationWhileRecordsWait() throws {
        var core = core(ordering: .key)
        core.assign([partition])
        let effects = core.admit([message(10), message(11), message(12), message(13, key: "b")], at: start)
        #expect(effects.start.map(\.message.offset) == [10, 13], "one record per key starts; 11 and 12 wait behind 10")
        #expect(core.inFlight == 4)
        let (revoking, revocation) = core.beginRevoking([partition])
        #expect(revoking.start.isEmpty)
        #expect(core.inFlight == 2, "the two waiting records left flight")
        // Taken in after the revocation began: not processed.
        #expect(core.admit([message(14)], at: start).start.isEmpty)
        let finished = core.finish(done(effects.start[0], effects.start[1]))
        #expect(finished.start.isEmpty, "a dropped record never starts")
        #expect(finished.progressed)
        #expect(core.isDrained(revocation.partitions))
        #expect(core.commitPlan().map(\.offset) == [11], "the commit stops at the first dropped record")
        #expect(core.completeRevocation(revocation).release == [partition])
    }

    @Test("a result of a partition that left is stale: counted as such, done without outputs, never committed")
    func staleResults() throws {
        var core = core()
        core.assign([partition])
        let item = try start(5, in: &core)
        _ = core.lose([partition])
        let (isCurrent, _) = core.beginPublishing([item], outputBytes: 10)
        #expect(isCurrent == [false])
        _ = core.finish([], stale: [item], outputBytes: 10)
        #expect(core.tally.staleResults == 1)
        #expect(core.tally.accountedFor == 0)
        #expect(core.inFlight == 0)
        #expect(core.flow.bytes == 0, "the stale record's bytes and the outputs' bytes are given back")
        #expect(core.commitPlan().isEmpty)
    }

    @Test("records of partitions not owned, or taken after shutdown began, are dropped but still counted as consumed")
    func dropped() throws {
        var core = core()
        #expect(core.admit([message(1)], at: start).start.isEmpty)
        core.assign([partition])
        _ = core.beginShutdown()
        #expect(core.admit([message(2)], at: start).start.isEmpty)
        #expect(core.tally.consumed == 2)
        #expect(core.inFlight == 0)
    }

    // MARK: Offsets

    @Test("an offset below one received is processed again, never skipped, and the commit waits for both generations")
    func rewind() throws {
        var core = core()
        core.assign([partition])
        let pending = try start(100, in: &core)
        for offset: Int64 in 101...105 { _ = core.finish(done(try start(offset, in: &core))) }
        #expect(core.commitPlan().map(\.offset) == [100])
        // The consumer went back to 103 (a redelivery, an offset reset): processed again.
        let effects = core.admit([message(103)], at: start)
        #expect(effects.rewinds == [WorkerCore.Rewind(partition: partition, offset: 103, previousNext: 106)])
        #expect(core.tally.offsetRewinds == 1)
        let rewound = try #require(effects.start.first, "the rewound offset was not started")
        _ = core.finish(done(rewound))
        #expect(core.commitPlan().map(\.offset) == [100], "the earlier generation's pending 100 holds the commit")
        _ = core.finish(done(pending))
        #expect(core.commitPlan().map(\.offset) == [104])
        #expect(core.isDrained(nil))
    }

    @Test("offsets the consumer jumps over are counted as skipped, and committed past; a rewind or a new assignment skips nothing")
    func skippedOffsets() throws {
        var core = core()
        core.assign([partition])
        // 13 to 19 never handed over (compaction, a transaction's marker, or lost on the way).
        for offset: Int64 in [10, 11, 12, 20] { _ = core.finish(done(try start(offset, in: &core))) }
        #expect(core.tally.offsetsSkipped == 7)
        #expect(core.commitPlan().map(\.offset) == [21], "the tracker commits past what it never received")
        _ = core.admit([message(15)], at: start)
        #expect(core.tally.offsetRewinds == 1 && core.tally.offsetsSkipped == 7, "a rewind is not a skip")
        // Another partition's first offset, wherever it starts, skips nothing.
        let other = TopicPartition(topic: "requests", partition: 4)
        core.assign([other])
        _ = core.admit([message(500, key: "b", in: other)], at: start)
        #expect(core.tally.offsetsSkipped == 7)
        #expect(core.tally.totals.offsetsSkipped == 7, "the metrics topic's totals carry it")
    }

    @Test("a record given up (no result) is not done: its offset holds the commit and its key's next record does not start")
    func givenUp() throws {
        var core = core(ordering: .key)
        core.assign([partition])
        let effects = core.admit([message(1), message(2)], at: start)
        let first = try #require(effects.start.first)
        let finished = core.finish([WorkerCore.Published(item: first, result: nil)])
        #expect(finished.start.isEmpty)
        #expect(core.commitPlan().map(\.offset) == [1])
        #expect(core.tally.accountedFor == 0)
    }

    @Test("commits while the intake is held: a commit plan moves with finished records, and a commit that changes nothing is skipped")
    func commitsWhileHeld() throws {
        var core = core(maxRecords: 4)
        core.assign([partition])
        let effects = core.admit((0..<4).map { message($0, key: "k\($0)") }, at: start)
        #expect(effects.intake == IntakeChange(held: true, sequence: 1), "the fourth record reaches the limit")
        #expect(core.isIntakeHeld)
        _ = core.finish(done(effects.start[0]))
        #expect(core.isIntakeHeld, "still above the low-water mark (2 of 4)")
        let plan = core.commitPlan()
        #expect(plan.map(\.offset) == [1])
        core.committed(plan)
        #expect(core.commitPlan().isEmpty, "nothing moved since")
        core.commitFailed()
        #expect(core.tally.commits == 1)
        #expect(core.tally.commitFailures == 1)
        let restarted = core.finish(done(effects.start[1]))
        #expect(restarted.intake == IntakeChange(held: false, sequence: 2))
        #expect(core.commitPlan().map(\.offset) == [2])
    }

    // MARK: Intake

    @Test("intake decisions are numbered and made only on a change; shutdown restarts the intake whatever flow control wants")
    func intakeDecisions() throws {
        var core = core(maxRecords: 2)
        core.assign([partition])
        #expect(core.admit([message(0, key: "a")], at: start).intake == nil)
        let held = core.admit([message(1, key: "b")], at: start)
        #expect(held.intake == IntakeChange(held: true, sequence: 1))
        #expect(core.admit([], at: start).intake == nil, "no change, no decision")
        let shutdown = core.beginShutdown()
        #expect(shutdown.intake == IntakeChange(held: false, sequence: 2))
        #expect(shutdown.progressed)
        let finished = core.finish(done(held.start[0]))
        #expect(finished.intake == nil, "flow control's own restart changes nothing once shutdown restarted the intake")
    }

    @Test("the outputs' bytes count against the byte limit until they are acknowledged")
    func outputBytes() throws {
        var core = core(maxRecords: 100, maxBytes: 1_000)
        core.assign([partition])
        let item = try start(0, in: &core)
        let (_, holding) = core.beginPublishing([item], outputBytes: 2_000)
        #expect(holding.intake?.held == true)
        let finished = core.finish(done(item), outputBytes: 2_000)
        #expect(finished.intake?.held == false)
        #expect(core.flow.bytes == 0)
    }

    // MARK: Counting

    @Test("each outcome is counted once, and dev, Prometheus and snapshots read that one count")
    func countedOnce() throws {
        var core = core()
        core.assign([partition])
        let first = try start(0, in: &core)
        let second = try start(1, in: &core)
        _ = core.finish(done(first, second))
        let statistics = core.statistics(at: start)
        #expect(statistics.deadLetters == 2)
        #expect(statistics.accountedFor == 2)
        #expect(statistics.totals.deadLetters == ["BadPriority": 2])
        #expect(statistics.totals.outputs == ["notifications.dead-letter": 2])
        #expect(statistics.consumed == 2)
        #expect(statistics.rebalances == 1)
        let series = Dictionary(
            uniqueKeysWithValues: core.tally.counterSeries(MetricNames(prefix: "t")).map { ($0.key, $0.value) })
        #expect(series["t_dead_letters_total|reason=BadPriority"] == 2)
        #expect(series["t_outputs_produced_total|topic=notifications.dead-letter"] == 2)
        #expect(series["t_records_consumed_total"] == 2)
    }

    @Test("a token dead letter's feedback record is counted by reason; a TooManyRequests dead letter by its reason, with no feedback")
    func feedbackCounts() {
        func deadLetter(_ reason: RejectionReason) -> DispatchResult {
            DispatchResult(
                .deadLettered(
                    DeadLetter(
                        record: RequestRecord(key: Array("ab".utf8), headers: [], value: [], source: TopicPartitionOffset(topic: "requests", partition: 3, offset: 0)),
                        rejection: Rejection(reason, "test"), failedAt: Date(timeIntervalSince1970: 0), consumerGroup: "g")),
                topics: TopicSettings())
        }
        var tally = WorkerTally()
        for reason in [RejectionReason.unregistered, .unregistered, .badDeviceToken, .tooManyRequests] { tally.count(deadLetter(reason)) }
        #expect(tally.feedback == [.unregistered: 2, .badDeviceToken: 1])
        #expect(tally.deadLetters[.tooManyRequests] == 1)
        #expect(tally.totals.feedback == ["Unregistered": 2, "BadDeviceToken": 1])
        #expect(tally.totals.outputs["notifications.feedback"] == 3)
        let series = Dictionary(uniqueKeysWithValues: tally.counterSeries(MetricNames(prefix: "t")).map { ($0.key, $0.value) })
        #expect(series["t_feedback_records_total|reason=Unregistered"] == 2)
        #expect(series["t_dead_letters_total|reason=TooManyRequests"] == 1)
    }

    // MARK: Stalls

    @Test("stalls: a partition whose oldest record in flight is older than the limit, and the records past the drain limit")
    func stalls() throws {
        var core = core()
        let other = TopicPartition(topic: "requests", partition: 4)
        core.assign([partition, other])
        let old = core.admit([message(0, key: "a"), message(1, key: "b")], at: start)
        _ = core.admit([message(0, key: "c", in: other)], at: start + .seconds(50))
        let now = start + .seconds(60)
        #expect(core.oldestInFlightAge(at: now) == .seconds(60))
        let (stalled, overdue) = core.stalls(stalledAfter: .seconds(30), overdueAfter: .seconds(20), at: now)
        #expect(stalled == [partition])
        #expect(overdue == 2)
        _ = core.finish(done(old.start[0]))
        #expect(core.stalls(stalledAfter: .seconds(30), overdueAfter: .seconds(20), at: now).overdue == 1)
        _ = core.finish(done(old.start[1]))
        let after = core.stalls(stalledAfter: .seconds(30), overdueAfter: .seconds(20), at: now)
        #expect(after.stalled.isEmpty)
        #expect(after.overdue == 0)
        #expect(core.oldestInFlightAge(at: now) == .seconds(10))
    }
}
