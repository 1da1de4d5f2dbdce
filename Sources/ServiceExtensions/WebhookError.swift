import Dispatcher

/// Why a `webhook` step failed (the original content is then delivered).
enum WebhookError: ServiceExtensionError, CustomStringConvertible {
    /// The server answered with a status other than 200 or 204.
    case status(Int)
    /// A 200 whose body is not `{"payload": {...}, "attachments": [...]?}`.
    case invalidBody(String)
    /// The deadline had passed before the call could start.
    case deadlinePassed

    /// The failure's kind in log lines.
    var kind: String {
        switch self {
        case .status: "webhook-status"
        case .invalidBody: "webhook-invalid-body"
        case .deadlinePassed: "webhook-deadline-passed"
        }
    }

    var description: String {
        switch self {
        case .status(let code): "the webhook answered with status \(code) (expected 200 or 204)"
        case .invalidBody(let problem): "the webhook's body is not valid: \(problem)"
        case .deadlinePassed: "the deadline passed before the webhook was called"
        }
    }
}
