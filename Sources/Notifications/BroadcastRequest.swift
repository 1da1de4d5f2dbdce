public import Foundation
public import Records

/// A broadcast request that passed the checks of SEMANTICS section 15 the validator runs (1 to 6):
/// `POST /4/broadcasts/apps/<bundle ID>`, to every Live Activity subscribed to one channel.
public struct BroadcastRequest: Sendable {
    /// The `apns-topic`: the bundle ID, without a push-type suffix.
    public var bundleID: String
    /// The `apns-channel-id`, exactly as given (standard base64).
    public var channelID: String
    /// The broadcast's identifier: `apns-request-id`, or derived from the record's source as an
    /// `apns-id` is (section 1).
    public var requestID: MessageID
    /// Whether `apns-request-id` was given.
    public var requestIDWasGiven: Bool
    /// The priority, 10 (the default) or 5.
    public var priority: Priority
    /// `apns-expiration` in UNIX seconds; nil when absent or 0.
    public var expiration: Int64?
    /// The W3C `traceparent`, copied unchanged to every output.
    public var traceparent: String?
    /// The headers as received.
    public var headers: [RecordHeader]
    /// The payload (the rules of sections 2 and 14.1, loc objects allowed; never `event` `start`).
    public var payload: Payload
    /// Where the record came from.
    public var source: TopicPartitionOffset
    /// When the broadcast was validated (its `now`).
    public var receivedAt: Date

    /// Makes a broadcast from its parts.
    package init(
        bundleID: String, channelID: String, requestID: MessageID, requestIDWasGiven: Bool, priority: Priority,
        expiration: Int64?, traceparent: String?, headers: [RecordHeader], payload: Payload, source: TopicPartitionOffset,
        receivedAt: Date
    ) {
        self.bundleID = bundleID
        self.channelID = channelID
        self.requestID = requestID
        self.requestIDWasGiven = requestIDWasGiven
        self.priority = priority
        self.expiration = expiration
        self.traceparent = traceparent
        self.headers = headers
        self.payload = payload
        self.source = source
        self.receivedAt = receivedAt
    }

    /// The largest broadcast payload in bytes (section 15, check 6).
    package static let payloadLimit = 5_120

    /// The longest channel ID in characters (section 15, check 4: a contract choice).
    package static let longestChannelID = 64
}
