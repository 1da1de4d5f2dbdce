public import Foundation
public import Records

/// A validated request: everything the dispatcher needs, normalised.
public struct NotificationRequest: Sendable {
    /// The fields, as a plain value.
    private struct Fields: Sendable {
        var deviceToken: String
        var topic: String
        var bundleID: String
        var pushType: PushType
        var pushTypeWasGiven: Bool
        var priority: Priority
        var apnsID: MessageID
        var apnsIDWasGiven: Bool
        var expiration: Int64?
        var expirationIsZero: Bool = false
        var collapseID: String?
        var appStateOverride: AppState?
        /// The header's value in place: a view of the consumed record, never a copy.
        var traceparent: RecordBytes?
        var headers: [RecordHeader]
        var payload: Payload
        var source: TopicPartitionOffset
        var receivedAt: Date
    }

    /// The fields behind one reference (``CopyOnWrite``): a copy (each stage of the rules
    /// passes the request on, inside every delivery) is one retain instead of one per string in it.
    private var storage: CopyOnWrite<Fields>

    /// The device token, lowercase hexadecimal.
    public var deviceToken: String {
        get { storage.fields.deviceToken }
        set { storage.fields.deviceToken = newValue }
    }

    /// The `apns-topic` as given.
    public var topic: String {
        get { storage.fields.topic }
        set { storage.fields.topic = newValue }
    }

    /// The topic less its push type's suffix (for `mdm`, the topic).
    public var bundleID: String {
        get { storage.fields.bundleID }
        set { storage.fields.bundleID = newValue }
    }

    /// The push type, given or inferred.
    public var pushType: PushType {
        get { storage.fields.pushType }
        set { storage.fields.pushType = newValue }
    }

    /// Whether `apns-push-type` was given.
    public var pushTypeWasGiven: Bool {
        get { storage.fields.pushTypeWasGiven }
        set { storage.fields.pushTypeWasGiven = newValue }
    }

    /// The priority, given or defaulted (10, or 5 for `background`).
    public var priority: Priority {
        get { storage.fields.priority }
        set { storage.fields.priority = newValue }
    }

    /// The `apns-id`, given or derived from `source`; its text is the lowercase canonical UUID.
    public var apnsID: MessageID {
        get { storage.fields.apnsID }
        set { storage.fields.apnsID = newValue }
    }

    /// Whether `apns-id` was given.
    public var apnsIDWasGiven: Bool {
        get { storage.fields.apnsIDWasGiven }
        set { storage.fields.apnsIDWasGiven = newValue }
    }

    /// `apns-expiration` in UNIX seconds; nil when absent or 0.
    public var expiration: Int64? {
        get { storage.fields.expiration }
        set { storage.fields.expiration = newValue }
    }

    /// Whether `apns-expiration` was given as `0`: deliver once, never store (section 16.1).
    public var expirationIsZero: Bool {
        get { storage.fields.expirationIsZero }
        set { storage.fields.expirationIsZero = newValue }
    }

    /// `apns-collapse-id`; nil when absent or empty.
    public var collapseID: String? {
        get { storage.fields.collapseID }
        set { storage.fields.collapseID = newValue }
    }

    /// The `app-state` override, if any.
    public var appStateOverride: AppState? {
        get { storage.fields.appStateOverride }
        set { storage.fields.appStateOverride = newValue }
    }

    /// The W3C `traceparent`, copied unchanged to every output.
    public var traceparent: String? {
        get { storage.fields.traceparent.map { String(decoding: $0, as: UTF8.self) } }
        set { storage.fields.traceparent = newValue.map(RecordBytes.init) }
    }

    /// The `traceparent` header's bytes as received, which the outputs carry without a copy: as a
    /// string it was an allocation in validation and another in each output's header.
    package var traceparentBytes: RecordBytes? { storage.fields.traceparent }

    /// The headers as received.
    public var headers: [RecordHeader] {
        get { storage.fields.headers }
        set { storage.fields.headers = newValue }
    }

    /// The payload.
    public var payload: Payload {
        get { storage.fields.payload }
        set { storage.fields.payload = newValue }
    }

    /// Where the record came from.
    public var source: TopicPartitionOffset {
        get { storage.fields.source }
        set { storage.fields.source = newValue }
    }

    /// When the request was validated.
    public var receivedAt: Date {
        get { storage.fields.receivedAt }
        set { storage.fields.receivedAt = newValue }
    }

    /// Makes a request from its parts.
    package init(
        deviceToken: String, topic: String, bundleID: String, pushType: PushType, pushTypeWasGiven: Bool,
        priority: Priority, apnsID: MessageID, apnsIDWasGiven: Bool, expiration: Int64?, collapseID: String?,
        appStateOverride: AppState?, traceparent: RecordBytes?, headers: [RecordHeader], payload: Payload,
        source: TopicPartitionOffset, receivedAt: Date
    ) {
        storage = CopyOnWrite(
            Fields(
                deviceToken: deviceToken, topic: topic, bundleID: bundleID, pushType: pushType,
                pushTypeWasGiven: pushTypeWasGiven, priority: priority, apnsID: apnsID, apnsIDWasGiven: apnsIDWasGiven,
                expiration: expiration, collapseID: collapseID, appStateOverride: appStateOverride,
                traceparent: traceparent, headers: headers, payload: payload, source: source, receivedAt: receivedAt))
    }
}
