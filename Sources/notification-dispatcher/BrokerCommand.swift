import ArgumentParser
import Dispatcher
import DispatcherService
import Dispatch
import Foundation
import Kafka
import Logging
import Synchronization

/// `broker`: runs only the embedded Kafka broker with the product's topics, for tests and local work.
struct BrokerCommand: AsyncParsableCommand {
    /// The subcommand's name and help.
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Run an embedded Kafka broker (librdkafka's mock cluster) with the product's topics.",
        discussion: """
            Prints `bootstrap: HOST:PORT,...` on its own line once the topics exist, then runs until \
            SIGTERM or SIGINT. The mock cluster keeps about 5 MiB per partition and does not compact.
            """
    )

    /// How many brokers to start.
    @Option(help: "Number of brokers.")
    var brokers: Int = 3

    /// Partitions per product topic.
    @Option(help: "Partitions of each product topic.")
    var partitions: Int32 = 12

    /// Where to write the bootstrap address as well, if anywhere.
    @Option(help: "Also write the bootstrap address to this file.")
    var bootstrapFile: String?

    /// Rejects broker and partition counts the mock cannot serve.
    func validate() throws {
        guard (1...100).contains(brokers) else { throw ValidationError("--brokers must be between 1 and 100, got \(brokers)") }
        guard (1...10_000).contains(partitions) else { throw ValidationError("--partitions must be between 1 and 10000, got \(partitions)") }
    }

    /// Starts the cluster, creates the topics, announces the address and waits for SIGTERM or SIGINT.
    func run() async throws {
        if let bootstrapFile {
            do {
                try NamedFile(role: "bootstrap file", path: bootstrapFile, option: "--bootstrap-file").requireWritableLocation()
            } catch {
                printError(error.description)
                throw ExitCode(1)
            }
        }
        let logger = Logger(label: "notification-dispatcher.broker")
        // Trap the signals before announcing the address, so a quick SIGTERM still exits cleanly.
        let signals = TerminationSignals()
        let cluster = try EmbeddedKafkaCluster(brokers: brokers, logger: logger)
        try cluster.createTopics(TopicSettings.product.specifications(partitions: partitions))
        // The file first: whoever sees the line may read the file at once.
        if let bootstrapFile {
            try Data("\(cluster.bootstrapServers)\n".utf8).write(to: URL(fileURLWithPath: bootstrapFile), options: .atomic)
        }
        // Written unbuffered: whoever started us waits for this line.
        FileHandle.standardOutput.write(Data("bootstrap: \(cluster.bootstrapServers)\n".utf8))
        let signal = await signals.next()
        logger.info("stopping the embedded broker", metadata: ["signal": "\(signal)"])
        cluster.shutdown()
    }
}

/// SIGTERM and SIGINT delivered through Dispatch signal sources instead of killing the process.
private final class TerminationSignals: @unchecked Sendable {
    // @unchecked Sendable: `sources` is set once in init and only cancelled in deinit; the
    // mutable state is in a Mutex.

    /// The signal sources; kept alive as long as this object.
    private let sources: [any DispatchSourceSignal]
    /// The first signal received, and who waits for it.
    private let state = Mutex<(received: Int32?, waiter: CheckedContinuation<Int32, Never>?)>((nil, nil))

    /// Starts trapping SIGTERM and SIGINT.
    init() {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)  // the source sees the signal; the default action must not end the process
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
        }
        self.sources = sources
        for (source, number) in zip(sources, [SIGTERM, SIGINT]) {
            source.setEventHandler { [weak self] in self?.deliver(number) }
            source.resume()
        }
    }

    deinit {
        sources.forEach { $0.cancel() }
    }

    /// Suspends until SIGTERM or SIGINT arrives (at once if one already did) and returns it.
    func next() async -> Int32 {
        await withCheckedContinuation { continuation in
            let received: Int32? = state.withLock { state in
                if let received = state.received { return received }
                state.waiter = continuation
                return nil
            }
            if let received { continuation.resume(returning: received) }
        }
    }

    /// Records a signal and wakes the waiter, once.
    private func deliver(_ number: Int32) {
        let waiter: CheckedContinuation<Int32, Never>? = state.withLock { state in
            guard state.received == nil else { return nil }
            state.received = number
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: number)
    }
}
