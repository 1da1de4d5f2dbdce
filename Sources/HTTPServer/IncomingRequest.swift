import NIOCore
import NIOHTTP1

/// A request read off a connection: its head, and its body unless that was over the limit.
struct IncomingRequest {
    /// The request's head.
    var head: HTTPRequestHead
    /// The request, nil when its body was over the limit (the rest of it is not read).
    var request: Request?

    /// Whether the body was over the limit: the connection closes after the 413.
    var isTooLarge: Bool { request == nil }

    /// The connection sent a part out of order (NIO's decoder should never let that through).
    struct UnexpectedPart: Error, CustomStringConvertible {
        var description: String { "the HTTP decoder delivered a request part out of order" }
    }

    /// Reads the next request from `parts`; nil when the connection closed before one began.
    ///
    /// - Throws: a decoding error, or ``UnexpectedPart``.
    static func read(
        from parts: inout NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator,
        maxBodyBytes: Int
    ) async throws -> IncomingRequest? {
        guard let first = try await parts.next() else { return nil }
        guard case .head(let head) = first else { throw UnexpectedPart() }
        var body = ByteBuffer()
        while let part = try await parts.next() {
            switch part {
            case .head:
                throw UnexpectedPart()
            case .body(var chunk):
                guard body.readableBytes + chunk.readableBytes <= maxBodyBytes else {
                    return IncomingRequest(head: head, request: nil)
                }
                if body.readableBytes == 0 { body = chunk } else { body.writeBuffer(&chunk) }
            case .end:
                let request = Request(method: head.method, uri: head.uri, headers: head.headers, body: body)
                return IncomingRequest(head: head, request: request)
            }
        }
        // The client closed in the middle of a request: nothing to answer.
        return nil
    }
}
