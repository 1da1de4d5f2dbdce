import Foundation
import Hummingbird
public import Logging
import NIOCore
public import ServiceLifecycle

/// The worker's HTTP server (Hummingbird 2): `/metrics` in Prometheus text format,
/// `/health/live` and `/health/ready` (200 or 503 with the reason as text).
///
/// Place it first in the `ServiceGroup`: services stop in reverse order, so health and metrics
/// answer until processing has finished.
public struct OperationsServer: Service {
    private let application: Application<RouterResponder<BasicRequestContext>>
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
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            refresh()
            var buffer: [UInt8] = []
            buffer.reserveCapacity(16_384)
            export.emit(into: &buffer)
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: buffer))
            )
        }
        router.get("/health/live") { _, _ -> Response in Self.response(health.liveness()) }
        router.get("/health/ready") { _, _ -> Response in Self.response(health.readiness()) }
        application = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "notification-dispatcher"),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                logger.info("http server listening", metadata: [LogKey.httpHost: "\(host)", LogKey.httpPort: "\(bound)"])
                onListening(bound)
            },
            logger: logger
        )
    }

    /// Serves until graceful shutdown (or cancellation).
    public func run() async throws {
        // `run()`, not `runService()`: the latter traps SIGTERM itself and would stop serving
        // health and metrics at the first signal instead of after the worker.
        do {
            try await application.run()
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
            headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: verdict.reason + "\n"))
        )
    }
}
