public import JSON
import Notifications

/// What a service extension works on, like Apple's `UNNotificationContent`: the payload (the whole
/// JSON body, `aps` and custom keys) plus the attachments added so far.
public struct NotificationContent: Sendable, Hashable {
    /// The JSON body as it would be delivered.
    public var payload: JSONObject
    /// Attachments (JSON objects, e.g. `{"identifier": ..., "url": ...}`) in the order they were added.
    public var attachments: [JSONObject]

    /// Creates content.
    public init(payload: JSONObject, attachments: [JSONObject] = []) {
        self.payload = payload
        self.attachments = attachments
    }
}
