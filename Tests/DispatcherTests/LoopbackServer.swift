import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Testing

/// A real HTTP server on 127.0.0.1 (Hummingbird 2, port 0): the test body gets the port the
/// server really bound, handed back when the server is running, never guessed or slept for.
enum LoopbackServer {
    /// Runs `router` on a free loopback port for the duration of `body`.
    static func with<Result: Sendable>(
        _ router: Router<BasicRequestContext>,
        _ body: (_ baseURL: String) async throws -> Result
    ) async throws -> Result {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "loopback-server")
        logger.logLevel = .critical
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger)
        let services = ServiceGroup(configuration: .init(services: [app], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                group.cancelAll()
                throw ServerDidNotStart()
            }
            // Stop gracefully (not by cancellation) so the server closes its channels in order.
            do {
                let result = try await body("http://127.0.0.1:\(port)")
                await services.triggerGracefulShutdown()
                return result
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
        }
    }

    /// The server stopped before reporting its port.
    struct ServerDidNotStart: Error {}

    /// A JSON response.
    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
