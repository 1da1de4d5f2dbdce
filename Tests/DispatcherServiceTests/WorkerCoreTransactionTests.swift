import Dispatcher
import Foundation
import Kafka
import Testing

@testable import DispatcherService
import Records

/// The core's part in exactly-once mode, as values: no record is taken in while a transaction
/// commits, and a revocation lets waiting records run, so that a commit never leaves a done
/// record (whose outputs are in the transaction) above its committed offset; an aborted
/// transaction's records are rewound to the last commit, exactly once each.
@Suite("Worker core in exactly-once mode")
struct WorkerCoreTransactionTests {
    let values = WorkerCoreTests()

    @Test("while a transaction commits, no batch is taken in; afterwards it is, and the plan covers exactly what is done")
    func noIntakeWhileCommitting() throws {
        var core = values.core(ordering: .key)
        core.assign([values.partition])
        let admitted = core.admitUnlessCommitting([values.message(10), values.message(11, key: "b")], at: values.start)
        let first = try #require(admitted)
        _ = core.finish(values.done(first.start[0], first.start[1]))
        core.beginTransactionCommit()
        let refused = core.admitUnlessCommitting([values.message(12)], at: values.start)
        #expect(refused == nil)
        #expect(core.inFlight == 0, "the refused batch is not in flight")
        #expect(core.isDrained(nil))
        #expect(core.commitPlan().map(\.offset) == [12])
        core.endTransactionCommit()
        let admittedLater = core.admitUnlessCommitting([values.message(12)], at: values.start)
        let later = try #require(admittedLater)
        #expect(later.start.map(\.message.offset) == [12])
    }

    @Test("once shutdown began, a commit that never ended does not hold the intake: the batch is refused as at shutdown")
    func shutdownDuringCommit() {
        var core = values.core()
        core.assign([values.partition])
        core.beginTransactionCommit()
        _ = core.beginShutdown()
        let effects = core.admitUnlessCommitting([values.message(10)], at: values.start)
        #expect(effects?.start.isEmpty == true)
        #expect(core.inFlight == 0)
    }

    @Test("a revocation that keeps waiting records: they run after the running one, and the commit covers all of them")
    func revocationKeepsWaitingRecords() throws {
        var core = values.core(ordering: .key)
        core.assign([values.partition])
        let effects = core.admit([values.message(10), values.message(11), values.message(12, key: "b")], at: values.start)
        #expect(effects.start.map(\.message.offset) == [10, 12])
        let (_, revocation) = core.beginRevoking([values.partition], dropsWaiting: false)
        #expect(core.inFlight == 3, "the waiting record stays in flight")
        // 12 finishes first (its outputs would be in the transaction): the commit must not stop below it.
        _ = core.finish(values.done(effects.start[1]))
        #expect(!core.isDrained(revocation.partitions))
        let next = core.finish(values.done(effects.start[0]))
        #expect(next.start.map(\.message.offset) == [11], "the waiting record starts")
        _ = core.finish(values.done(next.start[0]))
        #expect(core.isDrained(revocation.partitions))
        #expect(core.commitPlan().map(\.offset) == [13])
    }

    // MARK: Rewinds

    /// Records given up (their outputs failed in the transaction).
    func givenUp(_ items: WorkItem...) -> [WorkerCore.Published] {
        items.map { WorkerCore.Published(item: $0, result: nil) }
    }

    @Test("a rewind: intake stops, waiting records are dropped, given-up records leave flight, and each partition goes back to its last commit")
    func rewindToLastCommit() throws {
        var core = values.core(ordering: .key)
        let other = TopicPartition(topic: "requests", partition: 4)
        let quiet = TopicPartition(topic: "requests", partition: 5)
        core.assign([values.partition, other, quiet])
        // A first transaction commits 10 and 11 (and 50 of the other partition).
        let first = core.admit([values.message(10), values.message(11, key: "b"), values.message(50, in: other)], at: values.start)
        _ = core.finish(values.done(first.start[0], first.start[1], first.start[2]))
        core.beginTransactionCommit()
        let plan = core.commitPlan()
        core.transactionCommitted(plan)
        core.endTransactionCommit()
        #expect(Set(plan.map(\.offset)) == [12, 51])

        // The next one: 12 done, 13 given up (its output was refused), 14 waiting behind 13;
        // the other partition's 51 still running.
        let second = core.admit(
            [values.message(12, key: "c"), values.message(13), values.message(14), values.message(51, in: other)], at: values.start)
        #expect(second.start.map(\.message.offset) == [12, 13, 51])
        _ = core.finish(values.done(second.start[0]))
        _ = core.finish(givenUp(second.start[1]))
        #expect(!core.isDrained(nil), "14 waits, 51 runs")

        _ = core.beginRewind()
        #expect(core.admitUnlessCommitting([values.message(15)], at: values.start) == nil, "nothing is taken in while rewinding")
        #expect(!core.isDrained(nil), "51 still runs")
        _ = core.finish(givenUp(second.start[2]))
        #expect(core.isDrained(nil), "the waiting record was dropped, the given-up ones left flight")
        #expect(core.inFlight == 0)

        let targets = core.completeRewind()
        #expect(
            Set(targets) == [
                TopicPartitionOffset(topic: values.partition.topic, partition: values.partition.partition, offset: 12),
                TopicPartitionOffset(topic: other.topic, partition: other.partition, offset: 51),
            ], "each partition that took records goes back to the last commit; the quiet one stays")
        #expect(core.commitPlan().isEmpty, "nothing of the aborted transaction is committable")
        core.endTransactionCommit()

        // Messages fetched before the rewind (15, 52) arrive first: dropped. Then the consumer
        // reports the rewind, and the records come again from the last commit, exactly once.
        let stragglers = core.admit([values.message(15), values.message(52, in: other), values.message(7, in: quiet)], at: values.start)
        #expect(stragglers.start.map(\.message.offset) == [7], "the quiet partition's record is taken; the others are dropped")
        #expect(stragglers.rewinds.isEmpty)
        core.rewound([values.partition, other])
        let again = core.admit(
            [values.message(12, key: "c"), values.message(13), values.message(14), values.message(51, in: other)], at: values.start)
        #expect(again.start.map(\.message.offset) == [12, 13, 51], "13's key is free again: the given-up record does not hold it")
        #expect(again.rewinds.isEmpty, "a fresh start, not a rewind within the partition's offsets")
        _ = core.finish(values.done(again.start[0], again.start[1], again.start[2], stragglers.start[0]))
        #expect(Set(core.commitPlan().map(\.offset)) == [14, 52, 8], "14 starts once 13 is done")
    }

    @Test("a rewound partition's messages are dropped until the consumer reports its rewind, and a rewind with nothing taken in moves nothing")
    func droppedUntilReported() throws {
        var core = values.core()
        let other = TopicPartition(topic: "requests", partition: 4)
        core.assign([values.partition, other])
        let first = core.admit([values.message(10)], at: values.start)
        _ = core.finish(givenUp(first.start[0]))
        _ = core.beginRewind()
        #expect(core.completeRewind().map(\.offset) == [10])
        core.endTransactionCommit()
        core.rewound([other])
        #expect(core.admit([values.message(11)], at: values.start).start.isEmpty, "a report for another partition frees nothing")
        // A second rewind before the report: this partition took nothing in since, so it is not moved again.
        _ = core.beginRewind()
        #expect(core.completeRewind().isEmpty)
        core.endTransactionCommit()
        core.rewound([values.partition])
        #expect(core.admit([values.message(10)], at: values.start).start.map(\.message.offset) == [10])
    }

    @Test("a commit moves the rewind's starting point: a rewind after it goes back only to it")
    func rewindAfterCommit() throws {
        var core = values.core()
        core.assign([values.partition])
        let first = core.admit([values.message(10), values.message(11)], at: values.start)
        _ = core.finish(values.done(first.start[0], first.start[1]))
        core.transactionCommitted(core.commitPlan())
        let second = core.admit([values.message(12)], at: values.start)
        _ = core.finish(givenUp(second.start[0]))
        _ = core.beginRewind()
        #expect(core.completeRewind().map(\.offset) == [12])
    }
}
