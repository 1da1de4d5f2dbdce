import Foundation
import HTTPServer
public import Logging
import NIOCore
import NIOHTTP1
public import ServiceLifecycle

/// The worker's HTTP server: `/metrics` in Prometheus text format, `/health/live` and
/// `/health/ready` (200 or 503 with the reason as text).
///
/// Place it first in the `ServiceGroup`: services stop in reverse order, so health and metrics
/// answer until processing has finished.
public struct OperationsServer: Service {
    private let server: Server
    private let host: String
    private let port: Int

    /// Creates the server on `host:port` (port 0 picks a free one; the bound port is logged as
    /// `http.port` and handed to `onListening`).
    ///
    /// - Parameters:
    ///   - export: the registry the worker's metrics write to.
    ///   - refresh: called before each scrape (copies the worker's counters into the metrics).
    public init(
        host: String,
        port: Int,
        export: PrometheusExport,
        health: WorkerHealth,
        logger: Logger,
        refresh: @escaping @Sendable () -> Void = {},
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.host = host
        self.port = port
        var router = Router()
        router.get("/metrics") { _ in
            refresh()
            var buffer: [UInt8] = []
            buffer.reserveCapacity(16_384)
            export.emit(into: &buffer)
            return Response(
                status: .ok,
                headers: ["content-type": "text/plain; version=0.0.4; charset=utf-8"],
                body: ByteBuffer(bytes: buffer)
            )
        }
        router.get("/health/live") { _ in Self.response(health.liveness()) }
        router.get("/health/ready") { _ in Self.response(health.readiness()) }
        var configuration = Server.Configuration(host: host, port: port)
        configuration.serverName = "notification-dispatcher"
        server = Server(configuration: configuration, router: router, logger: logger) { bound in
            logger.info("http server listening", metadata: [LogKey.httpHost: "\(host)", LogKey.httpPort: "\(bound)"])
            onListening(bound)
        }
    }

    /// Serves until graceful shutdown (or cancellation).
    public func run() async throws {
        do {
            try await server.run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            // Typically a second worker on one host with the default port: say which setting to change.
            throw PortInUse(host: host, port: port)
        }
    }

    /// The HTTP port is taken by another process.
    public struct PortInUse: Error, CustomStringConvertible {
        /// `http.host`.
        public var host: String
        /// `http.port`.
        public var port: Int

        public var description: String {
            """
            http.port \(port) on \(host) is already in use (another worker on this host?): give each worker \
            its own http.port (NOTIFICATION_DISPATCHER_HTTP_PORT), or 0 for a free one, logged at start
            """
        }
    }

    private static func response(_ verdict: HealthState.Verdict) -> Response {
        Response(
            status: verdict.isHealthy ? .ok : .serviceUnavailable,
            headers: ["content-type": "text/plain; charset=utf-8"],
            body: ByteBuffer(string: verdict.reason + "\n")
        )
    }
}
