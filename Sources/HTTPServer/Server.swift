public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
public import ServiceLifecycle

/// An HTTP/1.1 server on SwiftNIO: one task per connection, requests answered one after another on
/// each (kept alive unless the client says `Connection: close`), bodies read whole up to a limit,
/// responses sent whole or streamed.
///
/// It is a `Service`: ``run()`` serves until graceful shutdown, then stops accepting, closes idle
/// connections, lets responses in progress finish within
/// ``Configuration/shutdownGracePeriod`` and cancels what is left.
public struct Server: Service {
    /// Where and how the server listens.
    public struct Configuration: Sendable {
        /// The address to bind (a name or a literal address).
        public var host: String
        /// The port to bind; 0 picks a free one, handed to `onListening`.
        public var port: Int
        /// The listen backlog: connections the kernel queues before they are accepted.
        public var backlog: Int = 256
        /// The largest request body read; a larger one is answered 413 and the connection closed.
        public var maxRequestBodyBytes: Int = 1 << 20
        /// The `Server` header of every response, none when nil.
        public var serverName: String?
        /// How long a graceful shutdown waits for responses in progress before cancelling them.
        public var shutdownGracePeriod: Duration = .seconds(5)

        /// A configuration for `host:port` with the other settings at their defaults.
        public init(host: String = "127.0.0.1", port: Int = 0) {
            self.host = host
            self.port = port
        }
    }

    let configuration: Configuration
    let logger: Logger
    let onListening: @Sendable (Int) -> Void
    let handler: Router.Handler

    /// Creates a server that answers every request with `handler`.
    ///
    /// - Parameters:
    ///   - onListening: called once with the bound port, when connections are accepted.
    ///   - handler: a throw is answered 500 (and logged at error level).
    public init(
        configuration: Configuration,
        logger: Logger,
        onListening: @escaping @Sendable (Int) -> Void = { _ in },
        handler: @escaping Router.Handler
    ) {
        self.configuration = configuration
        self.logger = logger
        self.onListening = onListening
        self.handler = handler
    }

    /// Creates a server that answers with `router`'s routes.
    public init(
        configuration: Configuration,
        router: Router,
        logger: Logger,
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.init(configuration: configuration, logger: logger, onListening: onListening) { request in
            try await router.respond(to: request)
        }
    }

    /// Serves until graceful shutdown or cancellation.
    ///
    /// - Throws: NIO's `IOError` when the address cannot be bound (`EADDRINUSE` for a taken port).
    public func run() async throws {
        let registry = ConnectionRegistry()
        let listener = try await bind(registry)
        onListening(listener.channel.localAddress?.port ?? configuration.port)
        // Whatever ends the run, no connection outlives it.
        defer { registry.closeAll() }
        try await withThrowingDiscardingTaskGroup { group in
            try await withGracefulShutdownHandler {
                try await listener.executeThenClose { connections in
                    for try await channel in connections {
                        group.addTask { await self.serve(channel, registry: registry) }
                    }
                }
            } onGracefulShutdown: {
                // Closing the listener ends the accept loop once the connections already
                // accepted are handed over.
                listener.channel.close(promise: nil)
                registry.beginShutdown()
            }
            // The accept loop is over: responses in progress get the grace period, then are
            // cancelled (and their connections closed).
            if await !registry.drained(within: configuration.shutdownGracePeriod) {
                group.cancelAll()
                registry.closeAll()
            }
        }
    }

    /// Binds the listener. Each accepted connection gets the HTTP codec and is registered, but
    /// reads nothing until its task wraps it (``serve(_:registry:)``): the accept loop then hands
    /// over plain channels, which, unlike `NIOAsyncChannel`s, may be dropped safely if the loop is
    /// cancelled with some still queued (the registry closes them).
    private func bind(_ registry: ConnectionRegistry) async throws -> NIOAsyncChannel<any Channel, Never> {
        try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: Int32(clamping: configuration.backlog))
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.autoRead, value: false)
            .bind(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    if !registry.accepted(channel) { channel.close(promise: nil) }
                    return channel
                }
            }
    }

    /// Serves a client's requests on `channel`, one after another, until either side closes.
    private func serve(_ channel: any Channel, registry: ConnectionRegistry) async {
        defer { registry.closed(channel) }
        do {
            let connection = try await channel.eventLoop.submit {
                let connection = try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                    wrappingChannelSynchronously: channel)
                try channel.syncOptions?.setOption(.autoRead, value: true)
                return connection
            }.get()
            try await connection.executeThenClose { inbound, outbound in
                var parts = inbound.makeAsyncIterator()
                while let incoming = try await IncomingRequest.read(from: &parts, maxBodyBytes: configuration.maxRequestBodyBytes) {
                    registry.requestStarted(channel)
                    let response = await respond(to: incoming)
                    // Decided once the response is ready: a shutdown begun meanwhile closes too.
                    let keepAlive = incoming.head.isKeepAlive && !incoming.isTooLarge && !registry.isShuttingDown
                    try await send(response, to: incoming.head, keepAlive: keepAlive, through: outbound)
                    if registry.responseFinished(channel) || !keepAlive { break }
                }
            }
        } catch {
            // A client gone mid-response or a malformed request (NIO answers 400): routine.
            logger.debug("http connection ended", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// The handler's response, 413 for a body over the limit, 500 for a handler that throws.
    private func respond(to incoming: IncomingRequest) async -> Response {
        guard let request = incoming.request else { return Response(status: .payloadTooLarge) }
        do {
            return try await handler(request)
        } catch {
            logger.error(
                "http handler failed",
                metadata: [LogKey.method: "\(request.method)", LogKey.path: "\(request.path)", LogKey.error: "\(error)"])
            return Response(status: .internalServerError)
        }
    }

    /// Writes `response` to the request with `head`, with the framing and connection headers.
    private func send(
        _ response: Response,
        to head: HTTPRequestHead,
        keepAlive: Bool,
        through outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    ) async throws {
        var headers = response.headers
        if let serverName = configuration.serverName, !headers.contains(name: "server") {
            headers.add(name: "server", value: serverName)
        }
        // HTTP/1.1 keeps connections alive unless told; HTTP/1.0 closes them unless told.
        if !keepAlive {
            headers.replaceOrAdd(name: "connection", value: "close")
        } else if head.version.major == 1 && head.version.minor == 0 {
            headers.replaceOrAdd(name: "connection", value: "keep-alive")
        }
        switch response.body {
        case .bytes(let body):
            if Self.mayHaveBody(response.status) {
                headers.replaceOrAdd(name: "content-length", value: String(body.readableBytes))
            }
            let responseHead = HTTPResponseHead(version: head.version, status: response.status, headers: headers)
            if body.readableBytes > 0 {
                try await outbound.write(contentsOf: [.head(responseHead), .body(.byteBuffer(body)), .end(nil)])
            } else {
                try await outbound.write(contentsOf: [.head(responseHead), .end(nil)])
            }
        case .stream(let write):
            // No Content-Length: NIO's encoder frames the body as chunked.
            try await outbound.write(.head(HTTPResponseHead(version: head.version, status: response.status, headers: headers)))
            try await write(ResponseBodyWriter(outbound: outbound))
            try await outbound.write(.end(nil))
        }
    }

    /// Whether a response with `status` carries a body (RFC 9110 section 6.4.1).
    private static func mayHaveBody(_ status: HTTPResponseStatus) -> Bool {
        !(100..<200).contains(status.code) && status != .noContent && status != .notModified
    }
}
