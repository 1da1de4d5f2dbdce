/// One check of a broadcast request (SEMANTICS section 15), in the order they run: the first that
/// fails gives the dead letter's reason. `allCases` is that order.
public enum BroadcastCheck: String, Sendable, Hashable, CaseIterable {
    /// No `apns-*` header is repeated (`DuplicateHeaders`).
    case duplicateHeaders = "duplicate-headers"
    /// `apns-topic` is a configured bundle ID without a push-type suffix (`MissingTopic`, `TopicDisallowed`).
    case topic
    /// `apns-push-type` is `liveactivity`, in any ASCII case (`MissingPushType`, `InvalidPushType`).
    case pushType = "push-type"
    /// `apns-channel-id` is standard base64 of at most 64 characters (`MissingChannelId`, `BadChannelId`).
    case channelID = "channel-id"
    /// `apns-request-id`, `apns-priority` and `apns-expiration` have their formats
    /// (`BadMessageId`, `BadPriority`, `BadExpirationDate`).
    case headerFormats = "header-formats"
    /// The payload: present, at most 5120 bytes, valid, not `event` `start`
    /// (`PayloadEmpty`, `PayloadTooLarge`, `InvalidPayload`).
    case payload
    /// The app has the `broadcast` entitlement, and the profile is `modern` (`FeatureNotEnabled`).
    case entitlement
    /// The channels table has the channel for the bundle ID (`ChannelNotRegistered`).
    case channel

    /// The check that gives `reason` for a broadcast; nil for a reason no broadcast check gives.
    package init?(giving reason: RejectionReason) {
        switch reason {
        case .duplicateHeaders: self = .duplicateHeaders
        case .missingTopic, .topicDisallowed: self = .topic
        case .missingPushType, .invalidPushType: self = .pushType
        case .missingChannelId, .badChannelId: self = .channelID
        case .badMessageId, .badPriority, .badExpirationDate: self = .headerFormats
        case .payloadEmpty, .payloadTooLarge, .invalidPayload: self = .payload
        case .featureNotEnabled: self = .entitlement
        case .channelNotRegistered: self = .channel
        default: return nil
        }
    }

    /// What the check asks, for a person.
    package var summary: String {
        switch self {
        case .duplicateHeaders: "no apns-* header is repeated (names compared without regard to case)"
        case .topic: "apns-topic is present, has no push-type suffix, and names a bundle ID configured under apps (when apps lists any)"
        case .pushType: "apns-push-type is present and is liveactivity (ASCII case ignored)"
        case .channelID: "apns-channel-id is not empty, is standard base64 with padding, and has at most 64 characters"
        case .headerFormats: "apns-request-id, when given, is a UUID; apns-priority is 10 or 5; apns-expiration is UNIX seconds"
        case .payload: "the payload is present, at most 5120 bytes, valid (sections 2 and 14.1), and not event start"
        case .entitlement: "the app has the broadcast entitlement (and the profile is modern)"
        case .channel: "the channels table has this channel ID for this bundle ID"
        }
    }
}
