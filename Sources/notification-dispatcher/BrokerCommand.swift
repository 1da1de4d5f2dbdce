import ArgumentParser
import Dispatcher
import DispatcherService
import DispatcherTools
import Foundation
import Kafka
import Logging
import UnixSignals

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

    /// How many brokers to start, and partitions per product topic.
    @OptionGroup var size: EmbeddedClusterOptions

    /// Where to write the bootstrap address as well, if anywhere.
    @Option(help: "Also write the bootstrap address to this file.")
    var bootstrapFile: String?

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
        var signals = await UnixSignalsSequence(trapping: .sigterm, .sigint).makeAsyncIterator()
        let cluster = try EmbeddedKafkaCluster(brokers: size.brokers, logger: logger)
        try cluster.createTopics(TopicSettings.product.specifications(partitions: size.partitions))
        // The file first: whoever sees the line may read the file at once.
        if let bootstrapFile {
            try Data("\(cluster.bootstrapServers)\n".utf8).write(to: URL(fileURLWithPath: bootstrapFile), options: .atomic)
        }
        // Written unbuffered: whoever started us waits for this line.
        FileHandle.standardOutput.write(Data("bootstrap: \(cluster.bootstrapServers)\n".utf8))
        let signal = await signals.next()
        logger.info("stopping the embedded broker", metadata: ["signal": "\(signal.map { "\($0)" } ?? "none")"])
        cluster.shutdown()
    }
}
