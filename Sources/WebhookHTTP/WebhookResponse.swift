public import NIOCore

/// A webhook's complete answer: its status and its body (at most the call's cap).
public struct WebhookResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The body, empty when there was none.
    public var body: ByteBuffer
}
