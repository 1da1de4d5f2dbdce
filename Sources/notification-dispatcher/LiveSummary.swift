import DispatcherService
import Foundation
import ServiceLifecycle

/// The `dev` demo's one-line summary: updated in place on a terminal, printed as plain lines
/// otherwise. Returns once the feeder is done, every record it fed ended as a delivery, an action
/// or a dead letter, and the examples have read back every output record (or, as a backstop, a few
/// seconds later): the `dev` command then shuts the demo down.
final class LiveSummary: Service, Sendable {
    private let worker: DispatchWorker
    private let feeder: DemoFeeder
    private let examples: DemoExamples?
    private let console: DemoConsole

    /// How long the end waits for the examples to read back the last outputs.
    static let examplesCatchUpLimit: Duration = .seconds(5)

    init(worker: DispatchWorker, feeder: DemoFeeder, examples: DemoExamples?, console: DemoConsole) {
        self.worker = worker
        self.feeder = feeder
        self.examples = examples
        self.console = console
    }

    func run() async throws {
        let interval: Duration = console.isTerminal ? .milliseconds(250) : .seconds(2)
        let clock = ContinuousClock()
        var accountedForAt: ContinuousClock.Instant?
        while !(Task.isCancelled || Task.isShuttingDownGracefully) {
            let statistics = worker.statistics
            if feeder.isFinished, statistics.accountedFor >= feeder.count {
                let since = accountedForAt ?? clock.now
                accountedForAt = since
                let outputs = statistics.accountedFor + statistics.launches
                if (examples?.recordsRead ?? outputs) >= outputs || clock.now - since >= Self.examplesCatchUpLimit {
                    console.finish("done: " + Self.line(statistics, fed: feeder.count))
                    return
                }
                // Everything is accounted for: poll quickly until the examples caught up.
                try? await Task.sleep(for: .milliseconds(50))
                continue
            }
            console.showStatus(Self.line(statistics, fed: feeder.count))
            try? await Task.sleep(for: interval)
        }
        console.finish("done: " + Self.line(worker.statistics, fed: feeder.count))
    }

    /// The summary line for a set of counters.
    static func line(_ statistics: WorkerStatistics, fed: Int) -> String {
        let delivered = statistics.delivered
        let actions = statistics.actions
        return [
            "fed \(fed)",
            "in \(statistics.consumed)",
            "modified \(delivered["modified", default: 0])",
            "original \(delivered["original", default: 0])",
            "discarded \(delivered["discarded", default: 0])",
            "actions \(actions.values.reduce(0, +)) (app \(actions["app", default: 0]), "
                + "extension \(actions["contentExtension", default: 0]), none \(actions["none", default: 0]))",
            "dead letters \(statistics.deadLetters)",
            "launches \(statistics.launches)",
            "in flight \(statistics.inFlight)",
            "lag \(statistics.lag)",
        ].joined(separator: " | ")
    }
}
