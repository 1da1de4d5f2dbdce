public import JSON
public import Notifications

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
