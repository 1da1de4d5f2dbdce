/// Why a `webhook` step failed (the original content is then delivered).
enum WebhookError: Error, CustomStringConvertible {
    /// The server answered with a status other than 200 or 204.
    case status(Int)
    /// A 200 whose body is not `{"payload": {...}, "attachments": [...]?}`.
    case invalidBody(String)
    /// The deadline had passed before the call could start.
    case deadlinePassed

    var description: String {
        switch self {
        case .status(let code): "the webhook answered with status \(code) (expected 200 or 204)"
        case .invalidBody(let problem): "the webhook's body is not valid: \(problem)"
        case .deadlinePassed: "the deadline passed before the webhook was called"
        }
    }
}
