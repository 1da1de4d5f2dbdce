import DispatcherService
import Foundation
import ServiceLifecycle

/// The `dev` demo's one-line summary: updated in place on a terminal, printed as plain lines
/// otherwise. Returns once the feeder is done and every record it fed ended as a delivery, an
/// action or a dead letter (the `dev` command then shuts the demo down).
final class LiveSummary: Service, Sendable {
    private let worker: DispatchWorker
    private let feeder: DemoFeeder
    private let isTerminal: Bool

    init(worker: DispatchWorker, feeder: DemoFeeder) {
        self.worker = worker
        self.feeder = feeder
        self.isTerminal = isatty(STDOUT_FILENO) == 1
    }

    func run() async throws {
        let interval: Duration = isTerminal ? .milliseconds(250) : .seconds(2)
        while !(Task.isCancelled || Task.isShuttingDownGracefully) {
            let statistics = worker.statistics
            show(statistics)
            if feeder.isFinished, statistics.accountedFor >= feeder.count {
                finish(statistics)
                return
            }
            try? await Task.sleep(for: interval)
        }
        finish(worker.statistics)
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

    private func show(_ statistics: WorkerStatistics) {
        let text = Self.line(statistics, fed: feeder.count)
        // On a terminal: carriage return and erase-line, so the line updates in place.
        print(isTerminal ? "\r\u{1B}[2K" + text : text, terminator: isTerminal ? "" : "\n")
        fflush(nil)
    }

    private func finish(_ statistics: WorkerStatistics) {
        if isTerminal { print("") }
        print("done: " + Self.line(statistics, fed: feeder.count))
        fflush(nil)
    }
}
