public import Foundation
public import Records

/// A validated response record: what the user did with which delivered notification, on which
/// device and app (SEMANTICS.md section 10).
public struct NotificationResponse: Sendable {
    /// The device token, lowercase hexadecimal.
    public var deviceToken: String
    /// The app: the `apns-topic` header (a bundle ID, without push-type suffix).
    public var bundleID: String
    /// The `app-state` override, if any.
    public var appStateOverride: AppState?
    /// The W3C `traceparent`, copied unchanged to every output.
    public var traceparent: String?
    /// The notification's `apns-id`, lowercase canonical UUID.
    public var notificationID: String
    /// The notification's payload as delivered.
    public var payload: Payload
    /// What the user did.
    public var action: ResponseAction
    /// The text the user typed, for a text-input action.
    public var userText: String?
    /// The headers as received.
    public var headers: [RecordHeader]
    /// Where the record came from.
    public var source: TopicPartitionOffset
    /// When the response was validated.
    public var receivedAt: Date

    /// Makes a response from its parts.
    package init(
        deviceToken: String, bundleID: String, appStateOverride: AppState?, traceparent: String?,
        notificationID: String, payload: Payload, action: ResponseAction, userText: String?,
        headers: [RecordHeader], source: TopicPartitionOffset, receivedAt: Date
    ) {
        self.deviceToken = deviceToken
        self.bundleID = bundleID
        self.appStateOverride = appStateOverride
        self.traceparent = traceparent
        self.notificationID = notificationID
        self.payload = payload
        self.action = action
        self.userText = userText
        self.headers = headers
        self.source = source
        self.receivedAt = receivedAt
    }
}
