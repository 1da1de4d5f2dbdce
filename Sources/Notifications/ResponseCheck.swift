/// One check of response validation, in the order the rules run them (SEMANTICS.md section 10): the
/// first that fails gives the dead letter's reason, and the checks after it do not run.
///
/// `allCases` is that order: ``ResponseValidator`` runs the first six, the dispatcher the last
/// (`UnknownAction` needs the app's configuration). Each response reason comes from exactly one
/// check (``init(giving:)``), so a response's rejection names its check by its reason alone, and
/// `explain` can say which checks passed without running them again.
public enum ResponseCheck: String, Sendable, Hashable, CaseIterable {
    /// The record key is a device token (`MissingDeviceToken`, `BadDeviceToken`), as for requests.
    case deviceToken = "device-token"
    /// `apns-topic` is present (`MissingTopic`).
    case topicPresent = "topic-present"
    /// `apns-topic` is a bundle ID alone, in UTF-8, without a push type's suffix (`BadTopic`).
    case topicIsBundleID = "topic-bundle-id"
    /// The bundle ID is configured under `apps`, when `apps` lists any (`TopicDisallowed`).
    case topicAllowed = "topic-allowed"
    /// `app-state`, when given, is an app state (`BadAppState`).
    case appStateHeader = "app-state-header"
    /// The value is the documented object (`InvalidResponse`).
    case responseShape = "response-shape"
    /// The notification offers what the response names (`UnknownAction`).
    case actionOffered = "action-offered"

    /// What the check asks, for a person.
    package var summary: String {
        switch self {
        case .deviceToken: ValidationCheck.deviceToken.summary
        case .topicPresent: ValidationCheck.topicPresent.summary
        case .topicIsBundleID: "the apns-topic header is a bundle ID alone (UTF-8, no push type's suffix)"
        case .topicAllowed: ValidationCheck.topicAllowed.summary
        case .appStateHeader: ValidationCheck.appStateHeader.summary
        case .responseShape:
            "the value is an object with notification (apnsId, payload) and one of actionIdentifier and mediaCommand, userText only with an action"
        case .actionOffered: "the notification offers what the response names (its category's actions, text input, media button, profile)"
        }
    }

    /// The check that gives `reason`; nil for the reasons no response check gives (those of
    /// request headers and payloads, and `OutputRejected`).
    package init?(giving reason: RejectionReason) {
        switch reason {
        case .missingDeviceToken, .badDeviceToken: self = .deviceToken
        case .missingTopic: self = .topicPresent
        case .badTopic: self = .topicIsBundleID
        case .topicDisallowed: self = .topicAllowed
        case .badAppState: self = .appStateHeader
        case .invalidResponse: self = .responseShape
        case .unknownAction: self = .actionOffered
        case .invalidPushType, .badMessageId, .badPriority, .badExpirationDate, .badCollapseId, .payloadEmpty,
            .payloadTooLarge, .invalidPayload, .outputRejected, .duplicateHeaders, .deviceTokenNotForTopic,
            .unregistered, .expiredToken, .tooManyRequests, .missingPushType, .missingChannelId, .badChannelId,
            .featureNotEnabled, .channelNotRegistered, .serviceUnavailable, .badBadgeIncrement:
            return nil
        }
    }
}
