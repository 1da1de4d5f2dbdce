import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// An HTTP/1.1 server on loopback (NIO, port 0) that answers every request with `200` and a body
/// of `bodyBytes`, streamed in 64 KiB chunks as fast as the client reads them (chunked, or with a
/// `Content-Length` announced up front), and counts the body bytes the kernel took from it before
/// the client closed the connection: what a client that stops reading makes it send, measured.
final class StreamingBodyServer: Sendable {
    /// What the server saw.
    final class Counters: Sendable {
        private let values = Mutex<(requests: Int, accepted: Int, closed: Int)>((0, 0, 0))
        func received() { values.withLock { $0.requests += 1 } }
        func sent(_ bytes: Int) { values.withLock { $0.accepted += bytes } }
        func closed() { values.withLock { $0.closed += 1 } }
        /// Requests received.
        var requests: Int { values.withLock { $0.requests } }
        /// Body bytes written into the socket (taken by the kernel), over all connections.
        var bodyBytesSent: Int { values.withLock { $0.accepted } }
        /// Connections that closed.
        var closedConnections: Int { values.withLock { $0.closed } }
    }

    let counters = Counters()
    private let channel: any Channel

    /// The URL of its one resource.
    var url: String { "http://127.0.0.1:\(channel.localAddress?.port ?? 0)/huge" }

    /// Starts a server whose answers have `bodyBytes` of body (the bytes are a JSON-looking run of
    /// `a`s: their content never matters, only their number); `announced` sends `Content-Length`.
    init(bodyBytes: Int, announced: Bool) async throws {
        let counters = self.counters
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    try operations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                    try operations.addHandler(HTTPResponseEncoder())
                    try operations.addHandler(StreamingHandler(bodyBytes: bodyBytes, announced: announced, counters: counters))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
    }

    /// Stops listening.
    func stop() async {
        try? await channel.close()
    }
}

/// Streams one answer per request, writing while the channel is writable, so that what the
/// server sends follows what the client reads (plus the sockets' buffers).
private final class StreamingHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private static let chunk = ByteBuffer(repeating: UInt8(ascii: "a"), count: 64 * 1024)
    private let bodyBytes: Int
    private let announced: Bool
    private let counters: StreamingBodyServer.Counters
    /// Body bytes handed to the channel so far; nil before the answer starts.
    private var written: Int?
    private var open = true

    init(bodyBytes: Int, announced: Bool, counters: StreamingBodyServer.Counters) {
        self.bodyBytes = bodyBytes
        self.announced = announced
        self.counters = counters
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        counters.received()
        var headers = HTTPHeaders([("content-type", "application/json")])
        if announced {
            headers.add(name: "content-length", value: String(bodyBytes))
        } else {
            headers.add(name: "transfer-encoding", value: "chunked")
        }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        written = 0
        pump(context)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { pump(context) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        open = false
        counters.closed()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// Writes chunks until the channel stops being writable or the body is complete.
    private func pump(_ context: ChannelHandlerContext) {
        guard open, var sent = written, sent < bodyBytes else { return }
        let counters = self.counters
        while context.channel.isWritable, sent < bodyBytes {
            let size = min(Self.chunk.readableBytes, bodyBytes - sent)
            let promise = context.eventLoop.makePromise(of: Void.self)
            // Counted once the kernel took them: a write that fails (the client closed) is not.
            promise.futureResult.whenSuccess { counters.sent(size) }
            context.write(wrapOutboundOut(.body(.byteBuffer(Self.chunk.getSlice(at: 0, length: size)!))), promise: promise)
            sent += size
        }
        written = sent
        if sent >= bodyBytes {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            context.flush()
        }
    }
}
