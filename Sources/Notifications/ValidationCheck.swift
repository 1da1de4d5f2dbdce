/// One check of request validation, in the order ``RequestValidator`` runs them (SEMANTICS.md
/// section 1): the first that fails gives the rejection's reason, and the checks after it do not run.
///
/// `allCases` is that order; a rejection names the check that produced it (``Rejection/check``), so
/// `explain` can say which checks passed without running them again.
public enum ValidationCheck: String, Sendable, Hashable, CaseIterable {
    /// No `apns-*` header is repeated (`DuplicateHeaders`).
    case duplicateHeaders = "duplicate-headers"
    /// The record key is a device token (`MissingDeviceToken`, `BadDeviceToken`).
    case deviceToken = "device-token"
    /// `apns-topic` is present (`MissingTopic`).
    case topicPresent = "topic-present"
    /// `apns-push-type`, when given, is a push type (`InvalidPushType`).
    case pushTypeHeader = "push-type-header"
    /// `apns-id`, when given, is a UUID (`BadMessageId`).
    case messageIDHeader = "apns-id-header"
    /// `apns-priority`, when given, is 10, 5 or 1 (`BadPriority`).
    case priorityHeader = "priority-header"
    /// `apns-expiration`, when given, is UNIX seconds (`BadExpirationDate`).
    case expirationHeader = "expiration-header"
    /// `apns-collapse-id`, when given, has at most 64 bytes (`BadCollapseId`).
    case collapseIDHeader = "collapse-id-header"
    /// `app-state`, when given, is an app state (`BadAppState`).
    case appStateHeader = "app-state-header"
    /// `badge-increment`, when given, is an integer from -9999 to 9999 other than 0 (`BadBadgeIncrement`).
    case badgeIncrementHeader = "badge-increment-header"
    /// The payload is not empty (`PayloadEmpty`).
    case payloadPresent = "payload-present"
    /// The payload fits its push type's limit (`PayloadTooLarge`).
    case payloadSize = "payload-size"
    /// The payload is a JSON object with a well-typed `aps` object (`InvalidPayload`).
    case payloadValid = "payload-valid"
    /// A `background` push does not have priority 10 (`BadPriority`).
    case backgroundPriority = "background-priority"
    /// A `liveactivity` push does not have priority 1 (`BadPriority`).
    case liveActivityPriority = "liveactivity-priority"
    /// The topic fits the push type's suffix (`BadTopic`).
    case topicSuffix = "topic-suffix"
    /// The topic's bundle ID is configured under `apps`, when `apps` lists any (`TopicDisallowed`).
    case topicAllowed = "topic-allowed"
    /// A request with `badge-increment` is an alert, without `aps.badge`, to an app that keeps a
    /// badge ledger (section 21.1: `BadBadgeIncrement`).
    case badgeIncrementAllowed = "badge-increment-allowed"
    /// The devices table does not refuse the token (section 12.1: `BadDeviceToken`,
    /// `DeviceTokenNotForTopic`, `Unregistered`, `ExpiredToken`).
    case tokenState = "token-state"
    /// The token is under `dispatch.tooManyRequests`'s limit (section 12.3: `TooManyRequests`).
    case requestRate = "request-rate"

    /// Whether the dispatcher runs the check after ``RequestValidator``, rather than the validator
    /// itself: it needs the apps' settings (section 21.1: which apps keep a badge ledger) or the
    /// state tables (section 12: the token checks and the request limit).
    package var runsInDispatcher: Bool { self == .badgeIncrementAllowed || self == .tokenState || self == .requestRate }

    /// What the check asks, for a person.
    package var summary: String {
        switch self {
        case .duplicateHeaders: "no apns-* header is repeated (names compared without regard to case)"
        case .deviceToken: "the record key is a device token: 64 to 200 hexadecimal characters, even length"
        case .topicPresent: "the apns-topic header is present"
        case .pushTypeHeader: "apns-push-type, when given, is a known push type"
        case .messageIDHeader: "apns-id, when given, is a UUID (8-4-4-4-12 hexadecimal digits)"
        case .priorityHeader: "apns-priority, when given, is 10, 5 or 1"
        case .expirationHeader: "apns-expiration, when given, is a non-negative integer of UNIX seconds"
        case .collapseIDHeader: "apns-collapse-id, when given, has at most 64 bytes"
        case .appStateHeader: "app-state, when given, is foreground, background, suspended, notRunning or forceQuit"
        case .badgeIncrementHeader: "badge-increment, when given, is an integer from -9999 to 9999 other than 0"
        case .payloadPresent: "the payload is not empty"
        case .payloadSize: "the payload fits the push type's size limit"
        case .payloadValid: "the payload is a JSON object with an aps object whose known keys have the right types"
        case .backgroundPriority: "a background push does not have priority 10"
        case .liveActivityPriority: "a liveactivity push does not have priority 1"
        case .topicSuffix: "the topic ends in the push type's suffix, and in no other push type's"
        case .topicAllowed: "the topic's bundle ID is configured under apps (when apps lists any)"
        case .badgeIncrementAllowed: "a request with badge-increment is an alert without aps.badge, to an app whose badgeLedger is true"
        case .tokenState: "the devices table's entry for the token (if any) is for this environment and app, and the token is active"
        case .requestRate: "fewer than dispatch.tooManyRequests.limit requests to the token were accepted in its window"
        }
    }

    /// The check that gives `reason` when nothing more precise is known (`BadPriority` comes from
    /// ``priorityHeader`` unless the validator says ``backgroundPriority``); nil for `OutputRejected`,
    /// which no check gives, and for the response reasons (`InvalidResponse`, `UnknownAction`),
    /// which no request check gives.
    package init?(giving reason: RejectionReason) {
        switch reason {
        case .duplicateHeaders: self = .duplicateHeaders
        case .deviceTokenNotForTopic, .unregistered, .expiredToken: self = .tokenState
        case .tooManyRequests: self = .requestRate
        case .missingDeviceToken, .badDeviceToken: self = .deviceToken
        case .missingTopic: self = .topicPresent
        case .invalidPushType: self = .pushTypeHeader
        case .badMessageId: self = .messageIDHeader
        case .badPriority: self = .priorityHeader
        case .badExpirationDate: self = .expirationHeader
        case .badCollapseId: self = .collapseIDHeader
        case .badAppState: self = .appStateHeader
        case .badBadgeIncrement: self = .badgeIncrementHeader
        case .payloadEmpty: self = .payloadPresent
        case .payloadTooLarge: self = .payloadSize
        case .invalidPayload: self = .payloadValid
        case .badTopic: self = .topicSuffix
        case .topicDisallowed: self = .topicAllowed
        case .outputRejected, .invalidResponse, .unknownAction, .serviceUnavailable: return nil
        case .missingPushType, .missingChannelId, .badChannelId, .featureNotEnabled, .channelNotRegistered: return nil
        }
    }
}
