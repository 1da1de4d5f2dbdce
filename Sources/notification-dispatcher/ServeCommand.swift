import ArgumentParser
import CCallgrind
import Dispatcher
import DispatcherService
import Kafka
import Logging
import ServiceExtensions
import ServiceLifecycle
import UnixSignals
import Foundation

/// `serve`: one worker of the consumer group.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run one worker of the consumer group: requests in; deliveries, launches and dead letters out.",
        discussion: """
            Serves /metrics (Prometheus), /health/live and /health/ready on http.host:http.port, and
            publishes a JSON snapshot to topics.metrics every metrics.interval.
            """
    )

    /// Set in its environment, `serve` zeroes callgrind's counters (when it runs under it) just
    /// before it creates the worker and its Kafka clients: `bench counts` counts from there.
    static let countFromWorkerVariable = "NOTIFICATION_DISPATCHER_CALLGRIND_FROM_WORKER"

    @OptionGroup var configuration: ConfigurationOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let configuration = try self.configuration.load()
        let logger = try logging.bootstrap(label: "notification-dispatcher")
        var settings = WorkerSettings(configuration: configuration)
        // librdkafka statistics carry the consumer lag per partition; they also wake the event
        // loop every second, which is what the liveness check watches.
        settings.consumer.statisticsInterval = settings.consumer.statisticsInterval ?? .seconds(1)
        let export = PrometheusExport()
        let metrics = WorkerMetrics(names: MetricNames(prefix: configuration.metrics.prefix), factory: export.factory)
        let health = WorkerHealth(livenessLimit: configuration.http.livenessLimit)
        let frozenSettings = settings
        try await BuiltInExtensions.withRegistry { registry in
            let dispatcher = try Dispatcher(configuration: configuration, registry: registry)
            // `bench counts` counts from here, as it counts the C floor from its clients' creation.
            if ProcessInfo.processInfo.environment[Self.countFromWorkerVariable] != nil { nd_callgrind_zero_stats() }
            let worker = try DispatchWorker(
                settings: frozenSettings, dispatcher: dispatcher, logger: logger, metrics: metrics, health: health)
            let server = OperationsServer(
                host: configuration.http.host, port: configuration.http.port, export: export, health: health,
                logger: logger, refresh: { metrics.update(from: worker.statistics) })
            var metricsProducer = ProducerConfiguration(bootstrapServers: configuration.kafka.bootstrapServers)
            metricsProducer.properties = configuration.kafka.properties
            let publisher = try MetricsPublisher(
                metrics: metrics, statistics: { worker.statistics }, producer: metricsProducer,
                topic: configuration.topics.metrics,
                workerId: MetricsPublisher.workerId(configured: configuration.metrics.workerId),
                group: configuration.kafka.groupId, interval: configuration.metrics.interval, logger: logger)
            // Services stop in reverse order: the worker first, then the publisher (one last
            // snapshot), then the HTTP server, so health and metrics answer to the end. A worker
            // that fails (it cannot start, or stops on a fatal error, logged as critical) shuts
            // the others down gracefully too, rather than cancelling them: a cancelled HTTP server
            // logs its cancellation as errors after the critical line that says what went wrong.
            //
            // Each service is named here: without a name, ServiceLifecycle names it by printing
            // the service value (`"\(service)"`), which reflects over every stored property of a
            // struct and looks up the printing protocols of each type at run time (about 16
            // million instructions at start, `bench counts`), for a name that is a dump.
            var group = ServiceGroupConfiguration(
                services: [
                    .init(service: SecondSignalExit(), serviceName: "second-signal-exit"),
                    .init(service: server, serviceName: "operations-server"),
                    .init(service: publisher, serviceName: "metrics-publisher"),
                    .init(service: worker, failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: "dispatch-worker"),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
            // Past the drain limit the worker gives up on records in flight by itself; this is the
            // backstop should anything hang after that.
            group.maximumGracefulShutdownDuration = frozenSettings.drainLimit + .seconds(30)
            try await ServiceGroup(configuration: group).run()
        }
    }
}
