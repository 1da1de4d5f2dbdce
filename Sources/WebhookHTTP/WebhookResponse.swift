package import NIOCore

/// A webhook's complete answer: its status and its body (at most the call's cap).
package struct WebhookResponse: Sendable {
    /// The status code.
    package var status: Int
    /// The body, empty when there was none.
    package var body: ByteBuffer
}
