public import Foundation

/// A validated request: everything the dispatcher needs, normalised.
public struct NotificationRequest: Sendable {
    /// The device token, lowercase hexadecimal.
    public var deviceToken: String
    /// The `apns-topic` as given.
    public var topic: String
    /// The topic less its push type's suffix (for `mdm`, the topic).
    public var bundleID: String
    /// The push type, given or inferred.
    public var pushType: PushType
    /// Whether `apns-push-type` was given.
    public var pushTypeWasGiven: Bool
    /// The priority, given or defaulted (10, or 5 for `background`).
    public var priority: Priority
    /// The `apns-id`, lowercase canonical UUID, given or derived from `source`.
    public var apnsID: String
    /// Whether `apns-id` was given.
    public var apnsIDWasGiven: Bool
    /// `apns-expiration` in UNIX seconds; nil when absent or 0.
    public var expiration: Int64?
    /// Whether `apns-expiration` was given as `0`: deliver once, never store (section 16.1).
    public var expirationIsZero: Bool = false
    /// `apns-collapse-id`; nil when absent or empty.
    public var collapseID: String?
    /// The `app-state` override, if any.
    public var appStateOverride: AppState?
    /// The W3C `traceparent`, copied unchanged to every output.
    public var traceparent: String?
    /// The headers as received.
    public var headers: [RecordHeader]
    /// The payload.
    public var payload: Payload
    /// Where the record came from.
    public var source: RecordSource
    /// When the request was validated.
    public var receivedAt: Date

    /// Makes a request from its parts.
    package init(
        deviceToken: String, topic: String, bundleID: String, pushType: PushType, pushTypeWasGiven: Bool,
        priority: Priority, apnsID: String, apnsIDWasGiven: Bool, expiration: Int64?, collapseID: String?,
        appStateOverride: AppState?, traceparent: String?, headers: [RecordHeader], payload: Payload,
        source: RecordSource, receivedAt: Date
    ) {
        self.deviceToken = deviceToken
        self.topic = topic
        self.bundleID = bundleID
        self.pushType = pushType
        self.pushTypeWasGiven = pushTypeWasGiven
        self.priority = priority
        self.apnsID = apnsID
        self.apnsIDWasGiven = apnsIDWasGiven
        self.expiration = expiration
        self.collapseID = collapseID
        self.appStateOverride = appStateOverride
        self.traceparent = traceparent
        self.headers = headers
        self.payload = payload
        self.source = source
        self.receivedAt = receivedAt
    }
}
