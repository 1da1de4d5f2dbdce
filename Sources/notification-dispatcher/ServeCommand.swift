import ArgumentParser
import DispatcherService
import ServiceLifecycle
import UnixSignals

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

    @OptionGroup var configuration: ConfigurationOptions
    @OptionGroup var logging: LoggingOptions

    /// Loads the configuration and runs the application (worker, metrics, health, operations
    /// server) until SIGTERM or SIGINT has shut it down gracefully.
    func run() async throws {
        let configuration = try self.configuration.load()
        let logger = try logging.bootstrap(label: "notification-dispatcher")
        let application = DispatcherApplication(
            configuration: configuration, logger: logger,
            // First in the group, so that it stops last: a second signal during the graceful
            // shutdown still exits at once.
            services: [.init(service: SecondSignalExit(), serviceName: "second-signal-exit")],
            gracefulShutdownSignals: [.sigterm, .sigint])
        try await application.run()
    }
}
