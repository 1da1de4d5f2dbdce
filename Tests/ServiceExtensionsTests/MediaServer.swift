import Foundation
import HTTPServer
import NIOCore
import NIOHTTP1
import Synchronization
import TestSupport

/// A real HTTP server on a loopback port chosen by the system, serving test media.
///
/// `withServer` starts it, hands its port to `body` and stops it when `body` returns.
struct MediaServer {
    /// What the server did, for assertions: requests served and body bytes handed to the network.
    final class Counters: Sendable {
        private let state = Mutex<(requests: [String], bytesSent: Int, starts: Int, stops: Int)>(([], 0, 0, 0))

        /// Records a request for `path`.
        func request(_ path: String) { state.withLock { $0.requests.append(path) } }

        /// Adds `count` bytes written to a response body.
        func sent(_ count: Int) { state.withLock { $0.bytesSent += count } }

        /// Records that a streaming handler began writing its body (its response's head was sent).
        func start() { state.withLock { $0.starts += 1 } }

        /// Records that a streaming handler stopped writing.
        func stop() { state.withLock { $0.stops += 1 } }

        /// How many streaming handlers began writing.
        var starts: Int { state.withLock { $0.starts } }

        /// How many streaming handlers stopped writing.
        var stops: Int { state.withLock { $0.stops } }

        /// The paths requested so far, in order.
        var requests: [String] { state.withLock { $0.requests } }

        /// The body bytes written so far.
        var bytesSent: Int { state.withLock { $0.bytesSent } }
    }

    /// Runs a server with the routes `configure` adds, then `body` with its port; then stops the
    /// server gracefully (in-flight responses end first, within the server's grace period).
    static func withServer<Result: Sendable>(
        _ configure: (inout Router, Counters) -> Void,
        _ body: (_ port: Int, _ counters: Counters) async throws -> Result
    ) async throws -> Result {
        let counters = Counters()
        var router = Router()
        configure(&router, counters)
        // Every request is counted before routing, unknown paths included.
        let routes = router
        return try await Server.with(logger: LoopbackServer.quietLogger, handler: { request in
            counters.request(String(request.path))
            return try await routes.respond(to: request)
        }) { port in
            try await body(port, counters)
        }
    }

    /// A response of `bytes` with `Content-Type` `contentType` (none when nil).
    static func media(_ bytes: [UInt8], contentType: String?) -> Response {
        var headers = HTTPHeaders()
        if let contentType { headers.add(name: "content-type", value: contentType) }
        return Response(status: .ok, headers: headers, body: ByteBuffer(bytes: bytes))
    }

    /// A redirect to `location`.
    static func redirect(to location: String, status: HTTPResponseStatus = .found) -> Response {
        Response(status: status, headers: ["location": location])
    }
}
