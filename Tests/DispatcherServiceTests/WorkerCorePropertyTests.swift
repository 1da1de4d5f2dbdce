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
                + "\(reached.revocationsDrained) drained revocations, \(reached.commits) commits, \(reached.transactionRewinds) transaction rewinds")
    }
}
