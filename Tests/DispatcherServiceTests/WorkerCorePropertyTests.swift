import Dispatcher
import PropertyBased
import Testing

@testable import DispatcherService

/// The worker core's state machine under random event sequences (``CoreScenario``), checked
/// step by step against a reference model (``WorkerCoreModel``): ThreadSanitizer cannot see this
/// project's races (docs/testing.md), so the core that every thread goes through is tested
/// directly, as a value.
///
/// 100,000 sequences in all, each drawn afresh every run (the library's default: a random seed per
/// sequence). A failure prints the seed that reproduces it (`.fixedSeed(...)`), the shrunk
/// scenario as a literal and the trace of its calls; each counter-example found is kept below as
/// an example test.
@Suite("Worker core invariants under random events")
struct WorkerCorePropertyTests {
    @Test(
        "at-least-once: commits never pass a record not done, keys start in order, records end once, the intake follows the limits",
        arguments: [(OrderingMode.key, 40_000), (.partition, 15_000), (.unordered, 10_000)])
    func atLeastOnce(ordering: OrderingMode, sequences: Int) async {
        await check(ordering: ordering, exactlyOnce: false, sequences: sequences)
    }

    @Test(
        "exactly-once: every offset below the committed one is done in exactly one committed transaction, through rewinds",
        arguments: [(OrderingMode.key, 25_000), (.partition, 10_000)])
    func exactlyOnce(ordering: OrderingMode, sequences: Int) async {
        await check(ordering: ordering, exactlyOnce: true, sequences: sequences)
    }

    // MARK: Counter-examples
    //
    // The shrunk scenarios the properties printed, kept as examples. None came from the core as
    // it is: these broke deliberately broken cores (docs/testing.md, "The core's invariants"),
    // each in one of the places the properties guard, and pass on the real one.

    /// Plays `scenario` against the core and the model; nothing may break.
    func replay(_ scenario: CoreScenario, ordering: OrderingMode = .key, exactlyOnce: Bool) {
        let (failure, _) = WorkerCoreModel.check(scenario, ordering: ordering, exactlyOnce: exactlyOnce)
        #expect(failure == nil, "\(failure ?? "")")
    }

    @Test("one record taken in: the plan stays at it until it is done (a tracker committing past its lowest pending offset)")
    func planStaysAtPendingRecord() {
        let scenario = CoreScenario(maxRecords: 1, maxBytes: 8, resumeQuarters: 1, steps: [CoreStep(.admit, 0, 0, 0)])
        replay(scenario, exactlyOnce: false)
        replay(scenario, exactlyOnce: true)
    }

    @Test("a revocation drops waiting records and leaves the others of their keys in order (a queue that reordered what it kept)")
    func revocationKeepsOrderOfOtherPartitions() {
        // Records of devices 0 wait behind those of requests 0 (shared ordering); revoking
        // requests 0 drops its own and must keep the rest in their order.
        replay(
            CoreScenario(
                maxRecords: 1, maxBytes: 8, resumeQuarters: 1,
                steps: [
                    CoreStep(.admit, 1, 0, 87), CoreStep(.admit, 5, 2, 48), CoreStep(.admit, 4, 0, 111), CoreStep(.revoke, 0, 0, 0),
                ]), exactlyOnce: false)
    }

    @Test("exactly-once: after a rewind, messages fetched before it are dropped until the consumer reports it (a core that took them)")
    func rewindDropsStragglers() {
        replay(
            CoreScenario(
                maxRecords: 1, maxBytes: 8, resumeQuarters: 1,
                steps: [
                    CoreStep(.admit, 0, 0, 0), CoreStep(.publish, 0, 0, 0), CoreStep(.acknowledge, 0, 6, 0), CoreStep(.beginRewind, 0, 0, 0),
                    CoreStep(.completeRewind, 0, 0, 0), CoreStep(.admit, 0, 0, 0),
                ]), exactlyOnce: true)
    }

    @Test("the consumer goes back: the commit stays behind the earlier generation's pending record (a core that forgot it)")
    func consumerRewindKeepsEarlierGeneration() {
        replay(
            CoreScenario(
                maxRecords: 1, maxBytes: 8, resumeQuarters: 1,
                steps: [CoreStep(.admit, 2, 1, 0), CoreStep(.rewindConsumer, 5, 0, 0), CoreStep(.admit, 2, 0, 0)]),
            exactlyOnce: false)
    }

    @Test("a record of a lost partition finishes after the partition came back: it changes nothing of the new assignment (a core that let it)")
    func staleRecordLeavesNewAssignmentAlone() {
        replay(
            CoreScenario(
                maxRecords: 1, maxBytes: 8, resumeQuarters: 1,
                steps: [CoreStep(.admit, 0, 0, 0), CoreStep(.lose, 0, 0, 0), CoreStep(.assign, 0, 0, 0)]),
            exactlyOnce: false)
    }

    @Test("exactly-once: a rewind after a commit goes back only to that commit (a core that kept the older starting point)")
    func rewindAfterCommitGoesBackToIt() {
        replay(
            CoreScenario(
                maxRecords: 1, maxBytes: 8, resumeQuarters: 1,
                steps: [
                    CoreStep(.admit, 0, 0, 0), CoreStep(.beginTransactionCommit, 0, 0, 0), CoreStep(.finish, 0, 0, 0),
                    CoreStep(.commitTransaction, 0, 0, 0), CoreStep(.admit, 0, 0, 0), CoreStep(.finish, 0, 6, 0),
                ]), exactlyOnce: true)
    }

    // MARK: Running the properties

    func check(ordering: OrderingMode, exactlyOnce: Bool, sequences: Int) async {
        var reached = WorkerCoreModel.Reached()
        var played = 0
        await propertyCheck(count: sequences, input: CoreScenario.generator(exactlyOnce: exactlyOnce)) { scenario in
            // A long loop on one of the two threads of Swift's pool: other suites' jobs get their turn.
            await Task.yield()
            let (failure, figures) = WorkerCoreModel.check(scenario, ordering: ordering, exactlyOnce: exactlyOnce)
            played += 1
            reached += figures
            if let failure { Issue.record("\(failure)") }
        }
        // What the sequences reached (the shrinker's replays included, after a failure).
        print(
            "core-properties: \(exactlyOnce ? "exactly-once" : "at-least-once"), ordering \(ordering): \(played) sequences, "
                + "\(reached.steps) steps, \(reached.records) records taken in, \(reached.dropped) dropped, \(reached.holds) holds, "
                + "\(reached.stale) stale, \(reached.givenUp) given up, \(reached.offsetRewinds) offset rewinds, "
                + "\(reached.revocationsDrained) drained revocations, \(reached.commits) commits, \(reached.transactionRewinds) transaction rewinds, "
                + "\(reached.pipelined) pipelined, \(reached.requeued) requeued")
        if ordering == .key {
            // The generator reaches what pipelining changes: requests started behind others of
            // their key, and requests requeued when one before them in their batch closed it.
            #expect(reached.pipelined > 0 && reached.requeued > 0, "pipelined \(reached.pipelined), requeued \(reached.requeued)")
        }
    }
}
