public import Dispatcher
import Kafka
public import Logging
import ServiceExtensions
public import ServiceLifecycle
public import UnixSignals

/// The dispatcher as an application to run or to embed: one worker of the consumer group
/// (docs/worker.md) with everything `serve` runs beside it: its metrics (Prometheus's `/metrics`,
/// and a snapshot on `topics.metrics` every `metrics.interval`), its health (`/health/live`,
/// `/health/ready`), the HTTP server that answers both on `http.host:http.port`, and the extension
/// kinds the configuration's steps name, the built-in ones and those you add in Swift.
///
/// It is a `Service`: ``run()`` runs a `ServiceGroup` of its own
/// (your services, the operations server, the metrics publisher, the worker) and shuts it down
/// gracefully when the task that runs it is shut down gracefully (a `ServiceGroup` you put it in),
/// or on the signals given as `gracefulShutdownSignals` when it runs alone. `serve` is
///
/// ```swift
/// try await DispatcherApplication(configuration: configuration, logger: logger, gracefulShutdownSignals: [.sigterm, .sigint]).run()
/// ```
///
/// docs/extensions.md, "Embedding the dispatcher", has a whole program with an extension of its own.
///
/// The worker, its Kafka clients and the extensions' HTTP clients are made when ``run()`` starts
/// and shut down before it returns, so an application that is made and never run holds nothing
/// that needs shutting down. A configuration mistake in an extension step (an unknown kind, a
/// refused option) is thrown by ``run()`` before anything connects.
public final class DispatcherApplication: Service, Sendable {
    /// The configuration the worker runs with.
    public let configuration: Configuration
    /// The worker's settings (its Kafka clients, limits and intervals), from ``configuration``.
    package let settings: WorkerSettings
    /// The registry `/metrics` renders: the worker's metrics, and any others made with its
    /// `factory`.
    public let export: PrometheusExport
    /// The worker's metrics, written to ``export``.
    public let metrics: WorkerMetrics
    /// What `/health/live` and `/health/ready` answer.
    public let health: WorkerHealth
    /// The app states the worker reads (SEMANTICS section 6), filled from `topics.appStates`.
    package let appStates: AppStatesTable
    private let logger: Logger
    private let services: [ServiceGroupConfiguration.ServiceConfiguration]
    private let workerServices: @Sendable (DispatchWorker) -> [ServiceGroupConfiguration.ServiceConfiguration]
    private let extensionKinds: @Sendable (inout ExtensionRegistry) -> Void
    private let gracefulShutdownSignals: [UnixSignal]
    private let onListening: @Sendable (Int) -> Void

    /// An application for `configuration`.
    ///
    /// - Parameters:
    ///   - logger: the logger of every part (the worker, the HTTP server, the service group).
    ///   - services: services of yours to run in the application's group. They start first and
    ///     stop last, after the worker has drained and the HTTP server has stopped, so whatever
    ///     an extension of yours calls outlives the records that call it.
    ///   - extensionKinds: registers the kinds of your Swift extensions beside the built-in ones
    ///     (docs/extensions.md, "Registering kinds"); a kind registered here replaces a built-in
    ///     one of the same name.
    ///   - gracefulShutdownSignals: the signals that shut the application down gracefully when it
    ///     runs alone (`[.sigterm, .sigint]`, as `serve` does); none when it runs in a service
    ///     group of yours, whose own graceful shutdown then reaches it.
    ///   - onListening: called with the HTTP server's port once it listens (`http.port: 0` picks a
    ///     free one).
    public convenience init(
        configuration: Configuration,
        logger: Logger,
        services: [ServiceGroupConfiguration.ServiceConfiguration] = [],
        extensionKinds: @escaping @Sendable (inout ExtensionRegistry) -> Void = { _ in },
        gracefulShutdownSignals: [UnixSignal] = [],
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.init(
            configuration: configuration, settings: WorkerSettings(configuration: configuration), logger: logger,
            services: services, extensionKinds: extensionKinds, gracefulShutdownSignals: gracefulShutdownSignals,
            onListening: onListening)
    }

    /// An application whose worker runs with `settings` (made from `configuration` and adjusted,
    /// as `dev` does), reading `appStates`, with `workerServices`: services that need the worker
    /// (`dev`'s feeder and summary read its statistics), started after it and stopped before it.
    package init(
        configuration: Configuration,
        settings: WorkerSettings,
        appStates: AppStatesTable = AppStatesTable(),
        logger: Logger,
        services: [ServiceGroupConfiguration.ServiceConfiguration] = [],
        workerServices: @escaping @Sendable (DispatchWorker) -> [ServiceGroupConfiguration.ServiceConfiguration] = { _ in [] },
        extensionKinds: @escaping @Sendable (inout ExtensionRegistry) -> Void = { _ in },
        gracefulShutdownSignals: [UnixSignal] = [],
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        var settings = settings
        // librdkafka's statistics carry the consumer lag per partition; they also wake the event
        // loop every second, which is what the liveness check watches. `statistics.interval.ms`
        // in kafka.properties still wins (bench counts turns them off).
        settings.consumer.statisticsInterval = settings.consumer.statisticsInterval ?? .seconds(1)
        self.configuration = configuration
        self.settings = settings
        self.appStates = appStates
        self.logger = logger
        self.services = services
        self.workerServices = workerServices
        self.extensionKinds = extensionKinds
        self.gracefulShutdownSignals = gracefulShutdownSignals
        self.onListening = onListening
        export = PrometheusExport()
        metrics = WorkerMetrics(names: MetricNames(prefix: configuration.metrics.prefix), factory: export.factory)
        health = WorkerHealth(livenessLimit: configuration.http.livenessLimit)
    }

    /// Runs the application until it is shut down gracefully (the worker drains, commits and
    /// leaves its group first; the HTTP server answers to the end) or the worker stops on a
    /// failure, which it rethrows after shutting the rest down gracefully.
    ///
    /// - Throws: `ConfigurationError` for an extension step the registry refuses, `KafkaError`
    ///   when a Kafka client cannot be made, and what stopped the worker or another service.
    public func run() async throws {
        let configuration = configuration
        let settings = settings
        let metrics = metrics
        try await BuiltInExtensions.withRegistry(addKinds: extensionKinds) { registry in
            let dispatcher = try Dispatcher(configuration: configuration, registry: registry)
            let worker = try DispatchWorker(
                settings: settings, dispatcher: dispatcher, appStates: appStates, logger: logger, metrics: metrics, health: health)
            let server = OperationsServer(
                host: configuration.http.host, port: configuration.http.port, export: export, health: health, logger: logger,
                refresh: { metrics.update(from: worker.statistics) }, onListening: onListening)
            var metricsProducer = ProducerConfiguration(bootstrapServers: configuration.kafka.bootstrapServers)
            metricsProducer.properties = configuration.kafka.properties
            let publisher = try MetricsPublisher(
                metrics: metrics, statistics: { worker.statistics }, producer: metricsProducer, topic: configuration.topics.metrics,
                workerId: MetricsPublisher.workerId(configured: configuration.metrics.workerId), group: configuration.kafka.groupId,
                interval: configuration.metrics.interval, logger: logger)
            // Services stop in reverse order: the worker first, then the publisher (one last
            // snapshot), then the HTTP server, so health and metrics answer to the end, then the
            // embedder's. A worker that fails (it cannot start, or stops on a fatal error, logged
            // as critical) shuts the others down gracefully too, rather than cancelling them: a
            // cancelled HTTP server logs its cancellation as errors after the critical line that
            // says what went wrong.
            //
            // Each service is named here: without a name, ServiceLifecycle names it by printing
            // the service value (`"\(service)"`), which reflects over every stored property of a
            // struct and looks up the printing protocols of each type at run time (about 16
            // million instructions at start, `bench counts`), for a name that is a dump.
            var group = ServiceGroupConfiguration(
                services: services + [
                    .init(service: server, serviceName: "operations-server"),
                    .init(service: publisher, serviceName: "metrics-publisher"),
                    .init(service: worker, failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: "dispatch-worker"),
                ] + workerServices(worker),
                gracefulShutdownSignals: gracefulShutdownSignals,
                logger: logger
            )
            // Past the drain limit the worker gives up on records in flight by itself; this is the
            // backstop should anything hang after that.
            group.maximumGracefulShutdownDuration = settings.drainLimit + .seconds(30)
            try await ServiceGroup(configuration: group).run()
        }
    }
}
