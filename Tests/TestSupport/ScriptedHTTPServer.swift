public import NIOCore
import NIOHTTP1
import NIOPosix
public import NIOSSL
import Synchronization

/// An HTTP/1.1 server on loopback (NIO, port 0) whose every answer a test scripts, down to the
/// connection: answer (after a delay, with any status and headers), answer and close, close
/// without answering, or never answer. It counts connections and requests, so that tests see
/// reuse, limits and closes from the server's side.
public final class ScriptedHTTPServer: Sendable {
    /// What the server does with a request.
    public enum Behaviour: Sendable {
        /// Answers `status` with `headers` and `body` after `delay`; closes the connection afterwards
        /// when `close`.
        case respond(status: Int = 200, headers: [(String, String)] = [], body: String = "", delay: Duration = .zero, close: Bool = false)
        /// Closes the connection without answering.
        case close
        /// Never answers (the connection stays open until the client closes it).
        case hold
    }

    /// A request as received.
    public struct Request: Sendable {
        /// The connection's number (1 for the first accepted).
        public var connection: Int
        /// Its number on its connection (1 for the first).
        public var sequence: Int
        /// The request's target, as sent.
        public var uri: String
        /// The headers, in order.
        public var headers: [(String, String)]
        /// The body, as text.
        public var body: String
    }

    /// What the server saw, shared with its connections' handlers.
    public final class Counters: Sendable {
        private struct Values {
            var connections = 0
            var open = 0
            var mostOpen = 0
            var requests: [Request] = []
            var channels: [any Channel] = []
        }

        private let values = Mutex(Values())

        /// Keeps `channel`, so that the test can close it from the server's side.
        func accepted(_ channel: any Channel) { values.withLock { $0.channels.append(channel) } }
        /// Every connection accepted so far.
        public var channels: [any Channel] { values.withLock { $0.channels } }

        /// Counts a new connection; its number.
        func opened() -> Int {
            values.withLock { values in
                values.connections += 1
                values.open += 1
                values.mostOpen = max(values.mostOpen, values.open)
                return values.connections
            }
        }

        func closed() { values.withLock { $0.open -= 1 } }
        func received(_ request: Request) { values.withLock { $0.requests.append(request) } }
        /// Connections accepted so far.
        public var connections: Int { values.withLock { $0.connections } }
        /// Connections open now.
        public var open: Int { values.withLock { $0.open } }
        /// The most connections open at once so far.
        public var mostOpen: Int { values.withLock { $0.mostOpen } }
        /// The requests received so far, in order.
        public var requests: [Request] { values.withLock { $0.requests } }
    }

    /// What the server saw.
    public let counters = Counters()
    private let channel: any Channel

    /// The port it listens on.
    public var port: Int { channel.localAddress?.port ?? 0 }
    /// Its base URL.
    public var baseURL: String { "\(scheme)://127.0.0.1:\(port)" }
    private let scheme: String

    /// Starts a server answering by `script`; with `tls`, over TLS.
    public init(tls: NIOSSLContext? = nil, _ script: @escaping @Sendable (Request) -> Behaviour) async throws {
        scheme = tls == nil ? "http" : "https"
        let counters = self.counters
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let number = counters.opened()
                    counters.accepted(channel)
                    let operations = channel.pipeline.syncOperations
                    if let tls { try operations.addHandler(NIOSSLServerHandler(context: tls)) }
                    try operations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                    try operations.addHandler(HTTPResponseEncoder())
                    try operations.addHandler(ScriptedHandler(connection: number, counters: counters, script: script))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    /// Stops listening (connections already accepted stay until their client closes them).
    public func stop() async {
        try? await channel.close()
    }

    /// Closes every connection from the server's side, as a server's idle timeout does.
    public func closeConnections() async {
        for channel in counters.channels { try? await channel.close() }
    }

    /// Waits until `condition` holds of the counters, checking every 10 ms, up to `limit`.
    public func wait(limit: Duration = .seconds(10), until condition: (Counters) -> Bool) async -> Bool {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            if condition(counters) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(counters)
    }
}

/// Serves one connection of a ``ScriptedHTTPServer``.
private final class ScriptedHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let connection: Int
    private let counters: ScriptedHTTPServer.Counters
    private let script: @Sendable (ScriptedHTTPServer.Request) -> ScriptedHTTPServer.Behaviour
    private var sequence = 0
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()

    init(connection: Int, counters: ScriptedHTTPServer.Counters, script: @escaping @Sendable (ScriptedHTTPServer.Request) -> ScriptedHTTPServer.Behaviour) {
        self.connection = connection
        self.counters = counters
        self.script = script
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var chunk):
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            sequence += 1
            let request = ScriptedHTTPServer.Request(
                connection: connection, sequence: sequence, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) },
                body: String(buffer: body))
            counters.received(request)
            answer(script(request), context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        counters.closed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func answer(_ behaviour: ScriptedHTTPServer.Behaviour, context: ChannelHandlerContext) {
        switch behaviour {
        case .hold:
            break
        case .close:
            context.close(promise: nil)
        case .respond(let status, let headers, let text, let delay, let close):
            let send = {
                var fields = HTTPHeaders(headers)
                if !fields.contains(name: "content-length"), !fields.contains(name: "transfer-encoding") {
                    fields.add(name: "content-length", value: String(text.utf8.count))
                }
                if close { fields.replaceOrAdd(name: "connection", value: "close") }
                context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: fields))), promise: nil)
                if !text.isEmpty { context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil) }
                let written = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
                if close { written.assumeIsolated().whenComplete { _ in context.close(promise: nil) } }
            }
            if delay == .zero {
                send()
            } else {
                context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) { send() }
            }
        }
    }
}
