import ArgumentParser
import Dispatcher
import DispatcherService
import Logging
import ServiceExtensions
import ServiceLifecycle
import UnixSignals

/// `serve`: one worker of the consumer group.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run one worker of the consumer group: requests in; deliveries, launches and dead letters out."
    )

    @OptionGroup var configuration: ConfigurationOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let configuration = try self.configuration.load()
        let logger = try logging.bootstrap(label: "notification-dispatcher")
        let settings = WorkerSettings(configuration: configuration)
        try await BuiltInExtensions.withRegistry { registry in
            let dispatcher = try Dispatcher(configuration: configuration, registry: registry)
            let worker = try DispatchWorker(settings: settings, dispatcher: dispatcher, logger: logger)
            var group = ServiceGroupConfiguration(
                services: [.init(service: SecondSignalExit()), .init(service: worker)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
            // Past the drain limit the worker gives up on records in flight by itself; this is the
            // backstop should anything hang after that.
            group.maximumGracefulShutdownDuration = settings.drainLimit + .seconds(30)
            try await ServiceGroup(configuration: group).run()
        }
    }
}
