import NIOCore
import NIOHTTP1
import NIOPosix

/// One client connection to a server under test, driven request by request, so that tests see
/// what a connection does (kept alive, closed) rather than what a pooling client hides.
struct RawConnection {
    /// A response as received.
    struct Received: Sendable {
        var head: HTTPResponseHead
        var body: [UInt8]

        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// The connection delivered a response part out of order.
    struct UnexpectedPart: Error {}

    private var responses: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>

    /// Connects to `127.0.0.1:port` for the duration of `body`.
    static func with<Result: Sendable>(port: Int, _ body: (inout RawConnection) async throws -> Result) async throws -> Result {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var connection = RawConnection(responses: inbound.makeAsyncIterator(), outbound: outbound)
            return try await body(&connection)
        }
    }

    /// Sends a request and reads its response; nil when the server closed the connection instead.
    mutating func send(
        _ uri: String, method: HTTPMethod = .GET, headers: HTTPHeaders = [:], body: String? = nil
    ) async throws -> Received? {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: headers)
        head.headers.replaceOrAdd(name: "host", value: "127.0.0.1")
        var parts: [HTTPClientRequestPart] = [.head(head)]
        if let body {
            head.headers.replaceOrAdd(name: "content-length", value: String(body.utf8.count))
            parts = [.head(head), .body(.byteBuffer(ByteBuffer(string: body)))]
        }
        try await outbound.write(contentsOf: parts + [.end(nil)])
        return try await receive()
    }

    /// Reads one response; nil when the connection closed before one began.
    mutating func receive() async throws -> Received? {
        guard let first = try await responses.next() else { return nil }
        guard case .head(let head) = first else { throw UnexpectedPart() }
        var body: [UInt8] = []
        while let part = try await responses.next() {
            switch part {
            case .head: throw UnexpectedPart()
            case .body(let chunk): body += chunk.readableBytesView
            case .end: return Received(head: head, body: body)
            }
        }
        throw UnexpectedPart()
    }

    /// Whether the server closed the connection (nothing more arrives).
    mutating func isClosedByServer() async throws -> Bool {
        try await responses.next() == nil
    }
}
