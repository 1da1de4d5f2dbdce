/// The reasons a record is refused for: APNs's for requests (SEMANTICS.md sections 1 and 2), and the
/// two of user responses (section 10).
public enum RejectionReason: String, Sendable, CaseIterable {
    /// An `apns-*` header appears more than once (section 1, check 0).
    case duplicateHeaders = "DuplicateHeaders"
    /// The record has no key (device token).
    case missingDeviceToken = "MissingDeviceToken"
    /// The key is not 64 to 200 hexadecimal characters of even length.
    case badDeviceToken = "BadDeviceToken"
    /// `apns-topic` is missing or empty.
    case missingTopic = "MissingTopic"
    /// The topic's bundle ID is not configured under `apps`.
    case topicDisallowed = "TopicDisallowed"
    /// The topic does not fit the push type's suffix rules.
    case badTopic = "BadTopic"
    /// `apns-push-type` is not a known push type.
    case invalidPushType = "InvalidPushType"
    /// `apns-id` is not a canonical UUID.
    case badMessageId = "BadMessageId"
    /// `apns-priority` is not 10, 5 or 1, or is 10 for a background push.
    case badPriority = "BadPriority"
    /// `apns-expiration` is not a non-negative integer.
    case badExpirationDate = "BadExpirationDate"
    /// `apns-collapse-id` is longer than 64 bytes.
    case badCollapseId = "BadCollapseId"
    /// The record has no value.
    case payloadEmpty = "PayloadEmpty"
    /// The value is larger than the push type's limit (status 413).
    case payloadTooLarge = "PayloadTooLarge"
    /// The value is not a JSON object with a well-typed `aps` object.
    case invalidPayload = "InvalidPayload"
    /// `app-state` is not a known app state.
    case badAppState = "BadAppState"
    /// `badge-increment` is not an integer from -9999 to 9999 other than 0, or the request cannot
    /// have one (its app keeps no badge ledger, it is not an alert, or its payload sets `aps.badge`):
    /// the product's own reason (section 21.1).
    case badBadgeIncrement = "BadBadgeIncrement"
    /// The devices table says the token belongs to another app (section 12.1).
    case deviceTokenNotForTopic = "DeviceTokenNotForTopic"
    /// The devices table says the token is no longer registered (section 12.1, status 410).
    case unregistered = "Unregistered"
    /// The devices table says the token has expired (section 12.1, status 410).
    case expiredToken = "ExpiredToken"
    /// Too many requests to the same token in `dispatch.tooManyRequests`'s window (section 12.3, status 429).
    case tooManyRequests = "TooManyRequests"
    /// A broadcast request without `apns-push-type` (section 15, check 3).
    case missingPushType = "MissingPushType"
    /// A broadcast request whose `apns-channel-id` is empty (section 15, check 4).
    case missingChannelId = "MissingChannelId"
    /// A broadcast request whose `apns-channel-id` is not standard base64 with padding, or longer
    /// than 64 characters (section 15, check 4).
    case badChannelId = "BadChannelId"
    /// A broadcast to an app without the `broadcast` entitlement, or any broadcast in the legacy
    /// profile (section 15, check 7).
    case featureNotEnabled = "FeatureNotEnabled"
    /// A broadcast to a channel the channels table does not have for the bundle ID (section 15, check 8).
    case channelNotRegistered = "ChannelNotRegistered"
    /// The dispatcher's state is full: a new activity or stored notification would exceed
    /// `dispatch.stateLimits` (status 503; docs/rules.md, "Memory bound"). The product's own
    /// reason for a valid request it cannot keep, never an APNs validation one.
    case serviceUnavailable = "ServiceUnavailable"
    /// A response whose value is not the documented object (section 10).
    case invalidResponse = "InvalidResponse"
    /// A response naming an action the notification does not offer (section 10).
    case unknownAction = "UnknownAction"
    /// The request was valid, but the brokers refused its outputs for good (too large, topic
    /// unknown or not authorised, invalid record), or kept failing them past the retry limit: the
    /// product's own reason, never an APNs one (docs/worker.md, "Failures").
    case outputRejected = "OutputRejected"

    /// The HTTP status APNs answers with: 413 for `PayloadTooLarge`, 410 for `Unregistered` and
    /// `ExpiredToken`, 429 for `TooManyRequests`, else 400; 500 for
    /// `OutputRejected` (the request was valid: the failure was the service's), 413 when its
    /// output was too large; 503 for `ServiceUnavailable`.
    public var status: Int {
        switch self {
        case .payloadTooLarge: 413
        case .unregistered, .expiredToken: 410
        case .tooManyRequests: 429
        case .outputRejected: 500
        case .serviceUnavailable: 503
        default: 400
        }
    }
}

extension RejectionReason {
    /// Whether a dead letter for this reason is followed by a feedback record (section 12.2): the
    /// token reasons `BadDeviceToken`, `DeviceTokenNotForTopic`, `Unregistered` and `ExpiredToken`.
    public var reportsTokenFeedback: Bool {
        switch self {
        case .badDeviceToken, .deviceTokenNotForTopic, .unregistered, .expiredToken: true
        default: false
        }
    }
}
