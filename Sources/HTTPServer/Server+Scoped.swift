public import Logging
import ServiceLifecycle

extension Server {
    /// The server stopped before it reported a port.
    public struct DidNotStart: Error, CustomStringConvertible {
        public var description: String { "the HTTP server stopped before it listened" }
    }

    /// Runs a server with `configuration` and `handler` for the duration of `body`, which gets the
    /// bound port; then shuts it down gracefully and waits for it to stop.
    ///
    /// - Throws: what `body` throws, or why the server could not start.
    public static func with<Result: Sendable>(
        _ configuration: Configuration = Configuration(),
        logger: Logger,
        handler: @escaping Router.Handler,
        _ body: (_ port: Int) async throws -> Result
    ) async throws -> Result {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let server = Server(configuration: configuration, logger: logger, onListening: { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }, handler: handler)
        let services = ServiceGroup(configuration: ServiceGroupConfiguration(services: [server], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // A server that fails to bind ends the wait for its port too.
                defer { portContinuation.finish() }
                try await services.run()
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                try await group.waitForAll()
                throw DidNotStart()
            }
            let result: Result
            do {
                result = try await body(port)
            } catch {
                await services.triggerGracefulShutdown()
                try? await group.waitForAll()
                throw error
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return result
        }
    }

    /// ``with(_:logger:handler:_:)`` with `router`'s routes.
    public static func with<Result: Sendable>(
        _ configuration: Configuration = Configuration(),
        router: Router,
        logger: Logger,
        _ body: (_ port: Int) async throws -> Result
    ) async throws -> Result {
        try await with(configuration, logger: logger, handler: { try await router.respond(to: $0) }, body)
    }
}
