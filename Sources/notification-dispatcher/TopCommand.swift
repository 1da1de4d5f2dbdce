import ArgumentParser
import DispatcherService
import Foundation
import Kafka
import Logging
import Synchronization

/// `top`: a live view of a consumer group's workers, read from the metrics topic.
struct TopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "top",
        abstract: "Show every worker of a group and the group's totals, live, from the metrics topic.",
        discussion: """
            Reads the metrics topic from its beginning and keeps the latest snapshot of each worker. \
            On a terminal the view is redrawn in place; otherwise it is printed as plain lines every \
            refresh. Ctrl-C stops it.
            """
    )

    @Option(help: "Kafka bootstrap servers (host:port,...).")
    var bootstrap: String

    @Option(help: "The metrics topic.")
    var topic: String = "notifications.metrics"

    @Option(help: "Only the workers of this consumer group.")
    var group: String?

    @Option(help: "Seconds between redraws.")
    var refresh: Double = 1

    @Option(help: "Stop after this many redraws (default: run until Ctrl-C).")
    var iterations: Int?

    func validate() throws {
        guard refresh > 0 else { throw ValidationError("--refresh must be above 0") }
        if let iterations, iterations < 1 { throw ValidationError("--iterations must be at least 1") }
    }

    func run() async throws {
        var logger = Logger(label: "notification-dispatcher.top")
        logger.logLevel = .error
        let configuration = ConsumerConfiguration(bootstrapServers: bootstrap, groupID: "notification-dispatcher-top")
        let reader = try KafkaTopicReader(configuration: configuration, topic: topic, logger: logger)
        let latest = LatestSnapshots()
        let isTerminal = isatty(STDOUT_FILENO) == 1
        await withTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                for await event in reader.events {
                    guard case .messages(let messages) = event else { continue }
                    for message in messages {
                        guard let value = message.value, let snapshot = try? MetricsSnapshot(jsonBytes: value) else { continue }
                        latest.keep(snapshot)
                    }
                }
            }
            var drawn = 0
            while !Task.isCancelled {
                let lines = TopView.render(latest.all, group: group, now: Date())
                // On a terminal: home the cursor and clear the screen, so the view redraws in place.
                print((isTerminal ? "\u{1B}[H\u{1B}[2J" : "") + lines.joined(separator: "\n") + (isTerminal ? "" : "\n"))
                fflush(nil)
                drawn += 1
                if let iterations, drawn >= iterations { break }
                try? await Task.sleep(for: .milliseconds(Int(refresh * 1_000)))
            }
            await reader.close()
            tasks.cancelAll()
        }
    }
}

/// The latest snapshot of each worker, written by the reading task and read by the drawing loop.
private final class LatestSnapshots: Sendable {
    private let byWorker = Mutex<[String: MetricsSnapshot]>([:])

    /// Keeps `snapshot` as its worker's latest.
    func keep(_ snapshot: MetricsSnapshot) {
        byWorker.withLock { $0[snapshot.workerId] = snapshot }
    }

    /// Every worker's latest snapshot.
    var all: [MetricsSnapshot] { byWorker.withLock { Array($0.values) } }
}
