public import NIOCore
public import NIOHTTP1

/// An HTTP request as a handler sees it: its head and its whole body.
///
/// The server reads the body before calling the handler, up to
/// ``Server/Configuration/maxRequestBodyBytes`` (413 beyond), so a handler never waits on the
/// network for it.
public struct Request: Sendable {
    /// The method (`GET`, `POST`, ...).
    public var method: HTTPMethod
    /// The request target as sent: the path and any query.
    public var uri: String
    /// The header fields, in the order received.
    public var headers: HTTPHeaders
    /// The body (empty when there is none).
    public var body: ByteBuffer
    /// The values of a route's `:name` segments, by name; set by ``Router``.
    public var parameters: [String: String] = [:]

    /// Creates a request; the server makes one per request it reads.
    public init(method: HTTPMethod, uri: String, headers: HTTPHeaders = [:], body: ByteBuffer = ByteBuffer()) {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.body = body
    }

    /// The path part of ``uri`` (without the query).
    public var path: Substring {
        uri.prefix { $0 != "?" }
    }
}
