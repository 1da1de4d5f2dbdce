import ArgumentParser
import Dispatcher
import DispatcherService
import DispatcherTools
import Foundation
import Kafka
import Logging
import ServiceLifecycle
import UnixSignals

/// `dev`: the zero-set-up demo. An embedded Kafka broker with the product's topics, one worker,
/// the sample requests and then a steady generated stream, a live summary, and one example record
/// of each outcome as it first happens. Its configuration and samples are built into the binary, so
/// it runs from any folder.
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Run the demo: embedded broker, topics, a worker and sample traffic, with a live summary.",
        discussion: """
            Prints the embedded broker's address (`bootstrap: HOST:PORT,...`) so you can read the \
            topics with kcat while it runs (with --bootstrap, the demo runs on your broker instead: \
            the configured topics and group, created when missing; what they already hold is \
            processed and shown too), and the first record of each outcome (a modified delivery, \
            an original one, a discarded one, a dead letter, a launch) as it happens. Without --config \
            and --samples it uses the copies of Config/dispatcher.yaml and Config/samples/ built into \
            the binary, so it runs from any folder. Ctrl-C stops it cleanly. With --count N it stops by \
            itself, with exit code 0, once all N records ended as deliveries, actions or dead letters. \
            One generated record in four is a user's response (taps, custom actions, text replies, \
            dismissals, media commands) to a notification of the configured apps.
            """
    )

    @Option(help: "The configuration file (YAML); default: the built-in copy of Config/dispatcher.yaml.")
    var config: String?

    @OptionGroup var logging: LoggingOptions

    @Option(help: "Generated records (requests and responses) per second after the samples.")
    var rate: Double = 50

    @Option(help: "Stop after feeding this many records in all (samples first), once all are accounted for.")
    var count: Int?

    @Option(help: "A folder of sample record files (*.jsonl; lines on the responses topic are responses); default: the built-in copy of Config/samples.")
    var samples: String?

    @Option(help: "Run against this Kafka cluster (HOST:PORT,...) instead of the embedded broker: the product's topics are created there when missing, and kafka.properties apply (security).")
    var bootstrap: String?

    @OptionGroup var size: EmbeddedClusterOptions

    func validate() throws {
        guard rate > 0 else { throw ValidationError("--rate must be above 0") }
        if let count, count < 0 { throw ValidationError("--count must not be negative") }
    }

    func run() async throws {
        var configuration = try loadConfiguration()
        let sampleRequests: [DemoTraffic.Request]
        if let samples {
            do {
                sampleRequests = try DemoFeeder.loadSamples(directory: samples, topics: configuration.topics)
            } catch {
                printError(error.description)
                throw ExitCode(2)
            }
            print("samples: \(sampleRequests.count) records from \(samples)")
        } else {
            sampleRequests = DemoFeeder.samples(DemoBundle.samples, topics: configuration.topics)
            print("samples: \(sampleRequests.count) records, built in: \(DemoBundle.samples.map(\.name).joined(separator: ", "))")
        }
        // The demo's worker logs only what needs attention: the summary line is the show.
        let logger = try logging.bootstrap(label: "notification-dispatcher", defaultLevel: .warning)

        // The demo always has an app-states topic, so states written with kcat take effect.
        if configuration.topics.appStates == nil { configuration.topics.appStates = TopicSettings.defaultAppStates }
        let topics = configuration.topics.specifications(partitions: size.partitions)
        let cluster: EmbeddedKafkaCluster?
        if let bootstrap {
            // Any broker: the topics it lacks are created, those it has are used as they are.
            cluster = nil
            let admin = try KafkaAdmin(bootstrapServers: bootstrap, properties: configuration.kafka.properties, logger: logger)
            try await admin.createTopics(topics, timeout: .seconds(30))
            configuration.kafka.bootstrapServers = bootstrap
        } else {
            let embedded = try EmbeddedKafkaCluster(brokers: size.brokers)
            for topic in topics {
                try embedded.createTopic(topic.name, partitions: topic.partitions, config: topic.config)
            }
            cluster = embedded
            configuration.kafka.bootstrapServers = embedded.bootstrapServers
            // The embedded broker answers an empty fetch only after fetch.wait.max.ms: keep it short.
            configuration.kafka.properties["fetch.wait.max.ms"] = configuration.kafka.properties["fetch.wait.max.ms"] ?? "10"
        }
        defer { cluster?.shutdown() }
        let bootstrapServers = configuration.kafka.bootstrapServers
        print("bootstrap: \(bootstrapServers)")
        print("topics: \(topics.map(\.name).joined(separator: ", "))")
        fflush(nil)

        var workerSettings = WorkerSettings(configuration: configuration)
        // The samples go to one chosen partition, not where a partitioner puts their keys.
        workerSettings.samplesRequestKeys = false
        let settings = workerSettings
        var feedConfiguration = ProducerConfiguration(bootstrapServers: bootstrapServers)
        feedConfiguration.properties = configuration.kafka.properties
        let feedProducer = try KafkaProducer(configuration: feedConfiguration, logger: logger)
        let console = DemoConsole()
        let examples = try DemoExamples(
            bootstrapServers: bootstrapServers, properties: configuration.kafka.properties, topics: configuration.topics,
            console: console, logger: logger)
        // The demo's HTTP server (/metrics, /health/live, /health/ready) answers on loopback, on a
        // port the kernel picks: a demo is local, and must not take the port of a `serve` (9090)
        // or of another demo on the same machine.
        configuration.http.host = "127.0.0.1"
        configuration.http.port = 0
        let frozenConfiguration = configuration
        let appStates = AppStatesTable()
        let rate = rate
        let count = count
        let application = DispatcherApplication(
            configuration: frozenConfiguration, settings: settings, appStates: appStates, logger: logger,
            services: [
                // First, so that it stops last (ServeCommand).
                .init(service: SecondSignalExit(), serviceName: "second-signal-exit"),
                .init(service: examples, successTerminationBehavior: .ignore, serviceName: "demo-examples"),
            ],
            workerServices: { worker in
                let topics = frozenConfiguration.topics
                let tables = worker.tables
                let feeder = DemoFeeder(
                    producer: feedProducer, samples: sampleRequests,
                    traffic: DemoTraffic(configuration: frozenConfiguration), rate: rate, limit: count, logger: logger,
                    stateTopics: Set([topics.appStates, topics.devices, topics.channels, settings.state?.badges].compactMap { $0 }),
                    inOrderTopics: Set([settings.state?.badges].compactMap { $0 }),
                    tableEntries: { appStates.count + ((tables.devices as? DevicesTable)?.count ?? 0) + (tables.channels?.count ?? 0) },
                    pinnedPartition: 0,
                    isSettled: { sent in
                        let statistics = worker.statistics
                        // The badges topic's records are the samples' resets and the worker's own
                        // counts, which it reads back: every one of them must have been read too.
                        let badges = settings.state?.badges ?? ""
                        let done = statistics.finished[topics.requests, default: 0] + statistics.finished[topics.responses, default: 0]
                            + statistics.finished[badges, default: 0] - statistics.outputs[badges, default: 0]
                        let commands = settings.state?.activityRepartition ?? ""
                        return done >= sent && statistics.finished[commands, default: 0] >= statistics.outputs[commands, default: 0]
                            && tables.activityIndex?.count ?? 0 == tables.activities?.count ?? 0
                    }
                )
                let summary = LiveSummary(
                    worker: worker, feeder: feeder, examples: examples, console: console,
                    fedTopics: [topics.requests, topics.responses], commandsTopic: settings.state?.activityRepartition)
                return [
                    .init(service: feeder, successTerminationBehavior: .ignore, serviceName: "demo-feeder"),
                    // The summary returns once everything fed is accounted for: that ends the demo.
                    .init(service: summary, successTerminationBehavior: .gracefullyShutdownGroup, serviceName: "live-summary"),
                ]
            },
            gracefulShutdownSignals: [.sigterm, .sigint],
            onListening: { port in console.show("operations: http://127.0.0.1:\(port)/metrics, /health/live, /health/ready") })
        try await application.run()
        await feedProducer.shutdown()
    }

    /// The configuration: `--config`, else the built-in copy of `Config/dispatcher.yaml`; the
    /// environment's overrides apply to both.
    private func loadConfiguration() throws -> Configuration {
        if let config { return try ConfigurationOptions.load(config) }
        print("configuration: built in (a copy of Config/dispatcher.yaml); --config FILE to use another")
        do {
            return try Configuration(yaml: DemoBundle.configuration, environment: ProcessInfo.processInfo.environment)
        } catch {
            printError("configuration error in the built-in demo configuration: \(error)")
            throw ExitCode(2)
        }
    }
}
