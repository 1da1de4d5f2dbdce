import DispatcherService
import Foundation
import ServiceLifecycle

/// The `dev` demo's one-line summary: updated in place on a terminal, printed as plain lines
/// otherwise. Returns once the feeder is done, every request and response it fed is done (ended
/// as a delivery, an action, a dead letter, a stored notification, or Live Activity commands sent
/// to their activity's owner) with every Live Activity command executed, and the examples have
/// read back every output record (or, as a backstop, a few seconds later): the `dev` command then
/// shuts the demo down.
final class LiveSummary: Service, Sendable {
    private let worker: DispatchWorker
    private let feeder: DemoFeeder
    private let examples: DemoExamples?
    private let console: DemoConsole
    /// The topics the feeder's records are consumed from (requests, responses), and the internal
    /// topic of Live Activity commands.
    private let fedTopics: [String]
    private let commandsTopic: String?

    /// How long the end waits for the examples to read back the last outputs.
    static let examplesCatchUpLimit: Duration = .seconds(5)

    init(
        worker: DispatchWorker, feeder: DemoFeeder, examples: DemoExamples?, console: DemoConsole, fedTopics: [String],
        commandsTopic: String?
    ) {
        self.fedTopics = fedTopics
        self.commandsTopic = commandsTopic
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
            if feeder.isFinished, isDone(statistics) {
                let since = accountedForAt ?? clock.now
                accountedForAt = since
                let outputs = statistics.accountedFor + statistics.launches
                if (examples?.recordsRead ?? outputs) >= outputs || clock.now - since >= Self.examplesCatchUpLimit {
                    console.finish("done: " + line(statistics))
                    return
                }
                // Everything is accounted for: poll quickly until the examples caught up.
                try? await Task.sleep(for: .milliseconds(50))
                continue
            }
            console.showStatus(line(statistics))
            try? await Task.sleep(for: interval)
        }
        console.finish("done: " + line(worker.statistics))
    }

    /// Whether every record fed is done, and every Live Activity command they sent was executed.
    private func isDone(_ statistics: WorkerStatistics) -> Bool {
        let done = fedTopics.reduce(0) { $0 + statistics.finished[$1, default: 0] }
        guard let commandsTopic else { return done >= feeder.count }
        return done >= feeder.count && statistics.finished[commandsTopic, default: 0] >= statistics.outputs[commandsTopic, default: 0]
    }

    /// The summary line for a set of counters: "in" counts the fed records done (state records
    /// and Live Activity commands are the worker's own business).
    private func line(_ statistics: WorkerStatistics) -> String {
        let delivered = statistics.delivered
        let actions = statistics.actions
        return [
            "fed \(feeder.count)",
            "in \(fedTopics.reduce(0) { $0 + statistics.finished[$1, default: 0] })",
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
