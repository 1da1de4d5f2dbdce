import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// A real HTTP server on a loopback port chosen by the system, serving test media.
///
/// `withServer` starts it, hands its port to `body` and stops it when `body` returns.
struct MediaServer {
    /// What the server did, for assertions: requests served and body bytes handed to the network.
    final class Counters: Sendable {
        private let state = Mutex<(requests: [String], bytesSent: Int, stops: Int)>(([], 0, 0))

        /// Records a request for `path`.
        func request(_ path: String) { state.withLock { $0.requests.append(path) } }

        /// Adds `count` bytes written to a response body.
        func sent(_ count: Int) { state.withLock { $0.bytesSent += count } }

        /// Records that a streaming handler stopped writing.
        func stop() { state.withLock { $0.stops += 1 } }

        /// How many streaming handlers stopped writing.
        var stops: Int { state.withLock { $0.stops } }

        /// The paths requested so far, in order.
        var requests: [String] { state.withLock { $0.requests } }

        /// The body bytes written so far.
        var bytesSent: Int { state.withLock { $0.bytesSent } }
    }

    /// Runs a server with the routes `configure` adds, then `body` with its port; then stops the
    /// server gracefully (in-flight responses end first).
    static func withServer<Result: Sendable>(
        _ configure: (Router<BasicRequestContext>, Counters) -> Void,
        _ body: (_ port: Int, _ counters: Counters) async throws -> Result
    ) async throws -> Result {
        let counters = Counters()
        let router = Router()
        router.middlewares.add(CountingMiddleware(counters: counters))
        configure(router, counters)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: Self.quietLogger
        )
        // Stopped gracefully, not by cancellation: a connection accepted while a cancelled server
        // tears down crashes NIO ("Deinited NIOAsyncWriter without calling finish()"), and stray
        // connections do arrive (other suites' clients retry ports that servers freed).
        let services = ServiceGroup(services: [app], logger: quietLogger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                await services.triggerGracefulShutdown()
                throw ServerDidNotStart()
            }
            do {
                let result = try await body(port, counters)
                await services.triggerGracefulShutdown()
                try await group.waitForAll()
                return result
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
        }
    }

    /// The server's logger: critical messages only, since stopping by cancellation logs errors.
    static let quietLogger: Logger = {
        var logger = Logger(label: "media-server")
        logger.logLevel = .critical
        return logger
    }()

    /// The server stopped before it announced a port.
    struct ServerDidNotStart: Error {}

    /// A response of `bytes` with `Content-Type` `contentType` (none when nil).
    static func media(_ bytes: [UInt8], contentType: String?) -> Response {
        var headers = HTTPFields()
        if let contentType { headers[.contentType] = contentType }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A redirect to `location`.
    static func redirect(to location: String, status: HTTPResponse.Status = .found) -> Response {
        Response(status: status, headers: [.location: location])
    }
}

/// Counts every request the server receives, before routing.
private struct CountingMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let counters: MediaServer.Counters

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        counters.request(request.uri.path)
        return try await next(request, context)
    }
}
