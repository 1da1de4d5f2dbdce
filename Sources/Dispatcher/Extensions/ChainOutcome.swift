public import Notifications

/// What running a chain came to, before the post-check (SEMANTICS section 4).
struct ChainOutcome: Sendable {
    /// How the run ended.
    enum Ending: Sendable {
        /// Every step finished in time; the content after the last step.
        case finished(ValidatedContent)
        /// The deadline passed; the best attempt (nil when nothing differs from the original).
        case expired(ValidatedContent?)
        /// A step failed: which one and why.
        case failed(step: String, detail: String)
    }

    /// How the run ended.
    let ending: Ending
    /// Time from the start of the first step to the end of the run (grace included).
    let elapsed: Duration
}

/// Content whose payload passed the type rules of SEMANTICS section 2.
public struct ValidatedContent: Sendable, Hashable {
    /// The payload with its typed view.
    public let payload: Payload
    /// The attachments.
    public let attachments: [JSONObject]

    /// The plain content.
    public var content: NotificationContent {
        NotificationContent(payload: payload.json, attachments: attachments)
    }

    /// Validates `content`; nil when its payload breaks a type rule.
    init?(_ content: NotificationContent) {
        guard let payload = try? Payload(validating: .object(content.payload)) else { return nil }
        self.payload = payload
        self.attachments = content.attachments
    }

    /// Wraps an already valid payload.
    init(payload: Payload, attachments: [JSONObject] = []) {
        self.payload = payload
        self.attachments = attachments
    }
}
