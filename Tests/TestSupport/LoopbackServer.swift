public import HTTPServer
public import Logging
import NIOCore
public import NIOHTTP1

/// A real HTTP server on 127.0.0.1 (the package's `HTTPServer`, port 0): the test body gets the
/// port the server really bound, handed back when the server is running, never guessed or slept for.
public enum LoopbackServer {
    /// Runs `router` on a free loopback port for the duration of `body`, then stops it gracefully
    /// (in-flight responses end first, within the server's grace period).
    public static func with<Result: Sendable>(
        _ router: Router,
        _ body: (_ baseURL: String) async throws -> Result
    ) async throws -> Result {
        var configuration = Server.Configuration(host: "127.0.0.1", port: 0)
        // A backlog as deep as the kernel allows: tests open thousands of connections at once.
        configuration.backlog = 4_096
        return try await Server.with(configuration, router: router, logger: quietLogger) { port in
            try await body("http://127.0.0.1:\(port)")
        }
    }

    /// The servers' logger: critical messages only (a client that goes away is routine here).
    public static let quietLogger: Logger = {
        var logger = Logger(label: "loopback-server")
        logger.logLevel = .critical
        return logger
    }()

    /// A JSON response.
    public static func json(_ text: String, status: HTTPResponseStatus = .ok) -> Response {
        Response(status: status, headers: ["content-type": "application/json"], body: ByteBuffer(string: text))
    }
}
