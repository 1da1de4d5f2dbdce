/// Why a webhook call failed below HTTP's status: the connection, TLS, the response's framing or
/// size, a deadline, or cancellation.
///
/// Decisions read ``code``; ``message`` is for people (it may name the host and the underlying
/// error, never the request's body).
package struct WebhookHTTPError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as a fixed set of cases.
    package enum Code: String, Sendable, CaseIterable {
        /// No connection could be made: refused, unreachable, the name did not resolve. Never retried.
        case connectFailed = "connect-failed"
        /// The connection was not made within the connect timeout (or before the call's backstop).
        case connectTimeout = "connect-timeout"
        /// The TLS handshake failed: an untrusted or mismatching certificate, or a protocol error.
        case tls
        /// The connection closed, or failed, before the response was complete.
        case connectionClosed = "connection-closed"
        /// The bytes that came back are not an HTTP/1.1 response.
        case invalidResponse = "invalid-response"
        /// The response's body is larger than the call allows.
        case responseTooLarge = "response-too-large"
        /// The client's own deadline (the backstop after the caller's deadline) passed.
        case timedOut = "timed-out"
        /// The caller cancelled the call (the dispatcher does so at the step's deadline).
        case cancelled
        /// The client was shut down.
        case shutDown = "shut-down"
    }

    /// What went wrong.
    package var code: Code
    /// What went wrong, for people.
    package var message: String
    /// For ``Code/responseTooLarge``: the body's bytes the call would have held when it stopped
    /// reading (those read, with the chunk that passed the cap), or the `Content-Length` announced
    /// over the cap, which is refused before any of the body is read.
    package var bodyBytes: Int?

    /// An error with `code`, described by `message`.
    package init(_ code: Code, _ message: String, bodyBytes: Int? = nil) {
        self.code = code
        self.message = message
        self.bodyBytes = bodyBytes
    }

    package var description: String { message }
}
