import ArgumentParser
import Dispatcher
import DispatcherService
import Foundation
import Kafka
import Logging
import ServiceExtensions
import ServiceLifecycle
import UnixSignals

/// `dev`: the zero-set-up demo. An embedded Kafka broker with the product's topics, one worker,
/// the sample requests and then a steady generated stream, and a live summary.
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Run the demo: embedded broker, topics, a worker and sample traffic, with a live summary.",
        discussion: """
            Prints the embedded broker's address (`bootstrap: HOST:PORT,...`) so you can read the
            topics with kcat while it runs. Ctrl-C stops it cleanly. With --count N it stops by itself,
            with exit code 0, once all N records ended as deliveries, actions or dead letters. One
            generated record in four is a user's response (taps, custom actions, text replies,
            dismissals, media commands) to a notification of the configured apps.
            """
    )

    @OptionGroup var configuration: ConfigurationOptions
    @OptionGroup var logging: LoggingOptions

    @Option(help: "Generated records (requests and responses) per second after the samples.")
    var rate: Double = 50

    @Option(help: "Stop after feeding this many records in all (samples first), once all are accounted for.")
    var count: Int?

    @Option(help: "The directory of sample record files (*.jsonl; lines on the responses topic are responses).")
    var samples: String = "Config/samples"

    @Option(help: "Brokers of the embedded cluster.")
    var brokers: Int = 3

    @Option(help: "Partitions of each topic.")
    var partitions: Int32 = 12

    func validate() throws {
        guard rate > 0 else { throw ValidationError("--rate must be above 0") }
        if let count, count < 0 { throw ValidationError("--count must not be negative") }
        guard brokers >= 1 else { throw ValidationError("--brokers must be at least 1") }
        guard partitions >= 1 else { throw ValidationError("--partitions must be at least 1") }
    }

    func run() async throws {
        var configuration = try self.configuration.load()
        // The demo's worker logs only what needs attention: the summary line is the show.
        let logger = try logging.bootstrap(label: "notification-dispatcher", defaultLevel: .warning)

        let cluster = try EmbeddedKafkaCluster(brokers: brokers)
        defer { cluster.shutdown() }
        // The demo always has an app-states topic, so states written with kcat take effect.
        if configuration.topics.appStates == nil { configuration.topics.appStates = TopicSettings.defaultAppStates }
        let topics = configuration.topics.specifications(partitions: partitions)
        for topic in topics {
            try cluster.createTopic(topic.name, partitions: topic.partitions, config: topic.config)
        }
        configuration.kafka.bootstrapServers = cluster.bootstrapServers
        print("bootstrap: \(cluster.bootstrapServers)")
        print("topics: \(topics.map(\.name).joined(separator: ", "))")
        fflush(nil)

        var settings = WorkerSettings(configuration: configuration)
        // The embedded broker answers an empty fetch only after fetch.wait.max.ms: keep it short.
        settings.consumer.properties["fetch.wait.max.ms"] = settings.consumer.properties["fetch.wait.max.ms"] ?? "10"
        let feedProducer = try KafkaProducer(
            configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers),
            logger: logger
        )
        let sampleRequests = DemoFeeder.loadSamples(directory: samples, topics: configuration.topics)
        let frozenConfiguration = configuration
        try await BuiltInExtensions.withRegistry { registry in
            let dispatcher = try Dispatcher(configuration: frozenConfiguration, registry: registry)
            let worker = try DispatchWorker(settings: settings, dispatcher: dispatcher, logger: logger)
            let feeder = DemoFeeder(
                producer: feedProducer, samples: sampleRequests,
                traffic: DemoTraffic(configuration: frozenConfiguration), rate: rate, limit: count, logger: logger
            )
            let summary = LiveSummary(worker: worker, feeder: feeder)
            var group = ServiceGroupConfiguration(
                services: [
                    .init(service: SecondSignalExit()),
                    .init(service: worker),
                    .init(service: feeder, successTerminationBehavior: .ignore),
                    // The summary returns once everything fed is accounted for: that ends the demo.
                    .init(service: summary, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
            group.maximumGracefulShutdownDuration = settings.drainLimit + .seconds(30)
            try await ServiceGroup(configuration: group).run()
        }
        await feedProducer.shutdown()
    }
}
