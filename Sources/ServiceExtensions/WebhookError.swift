import Dispatcher
import WebhookHTTP

/// Why a `webhook` step failed (the original content is then delivered).
enum WebhookError: ServiceExtensionError, CustomStringConvertible {
    /// The server answered with a status other than 200 or 204 (a redirect included: none is followed).
    case status(Int)
    /// A 200 whose body is not `{"payload": {...}, "attachments": [...]?}`.
    case invalidBody(String)
    /// The deadline had passed before the call could start.
    case deadlinePassed
    /// No complete answer came back: the connection, TLS, the response's framing or size, the
    /// client's deadline, or cancellation.
    case transport(WebhookHTTPError)

    /// The failure's kind in log lines: fixed text, `webhook-` and the client's code for a
    /// transport failure (`webhook-connect-failed`, `webhook-response-too-large`...).
    var kind: String {
        switch self {
        case .status: "webhook-status"
        case .invalidBody: "webhook-invalid-body"
        case .deadlinePassed: "webhook-deadline-passed"
        case .transport(let error): "webhook-" + error.code.rawValue
        }
    }

    var description: String {
        switch self {
        case .status(let code): "the webhook answered with status \(code) (expected 200 or 204)"
        case .invalidBody(let problem): "the webhook's body is not valid: \(problem)"
        case .deadlinePassed: "the deadline passed before the webhook was called"
        case .transport(let error): error.message
        }
    }
}
