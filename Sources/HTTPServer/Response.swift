public import NIOCore
public import NIOHTTP1

/// An HTTP response: a status, header fields and a body that is either bytes at hand or written
/// chunk by chunk.
public struct Response: Sendable {
    /// How the body is produced.
    public enum Body: Sendable {
        /// The whole body, sent with a `Content-Length`.
        case bytes(ByteBuffer)
        /// A body written by the closure through the writer it is given, sent chunked; the response
        /// ends when the closure returns. A throw ends the connection (the status is already sent).
        case stream(@Sendable (ResponseBodyWriter) async throws -> Void)
    }

    /// The status.
    public var status: HTTPResponseStatus
    /// The header fields. The server adds the framing (`Content-Length` or `Transfer-Encoding`),
    /// `Connection` when it closes, and `Server` when configured.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Body

    /// A response with `body` as bytes (none by default).
    public init(status: HTTPResponseStatus = .ok, headers: HTTPHeaders = [:], body: ByteBuffer = ByteBuffer()) {
        self.status = status
        self.headers = headers
        self.body = .bytes(body)
    }

    /// A response whose body `write` produces chunk by chunk, each write waiting while the client
    /// is slower than the writer (back-pressure).
    public init(
        status: HTTPResponseStatus = .ok,
        headers: HTTPHeaders = [:],
        stream write: @escaping @Sendable (ResponseBodyWriter) async throws -> Void
    ) {
        self.status = status
        self.headers = headers
        self.body = .stream(write)
    }
}
