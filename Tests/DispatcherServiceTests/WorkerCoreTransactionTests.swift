import Dispatcher
import Foundation
import Kafka
import Testing

@testable import DispatcherService
import Records

/// The core's part in exactly-once mode, as values: no record is taken in while a transaction
/// commits, and a revocation lets waiting records run, so that a commit never leaves a done
/// record (whose outputs are in the transaction) above its committed offset.
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
}
