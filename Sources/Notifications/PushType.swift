/// The `apns-push-type` values (SEMANTICS.md table 1.1).
public enum PushType: String, Sendable, CaseIterable {
    /// A user-visible notification.
    case alert
    /// A silent background update.
    case background
    /// A PushKit VoIP call.
    case voip
    /// A watchOS complication update.
    case complication
    /// A File Provider change.
    case fileprovider
    /// A location query.
    case location
    /// A Live Activity update.
    case liveactivity
    /// A Push to Talk push.
    case pushtotalk
    /// A widget reload.
    case widgets
    /// A Controls reload.
    case controls
    /// A device-management push; its topic is the MDM identifier.
    case mdm

    /// The suffix the topic must end with, or nil for `alert`, `background` and `mdm`.
    package var topicSuffix: String? {
        switch self {
        case .alert, .background, .mdm: nil
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .location: ".location-query"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        }
    }

    /// The largest payload in bytes: 4096 (voip 5120) in `modern`, 256 for every type in `legacy`.
    package func payloadLimit(profile: Profile) -> Int {
        switch profile {
        case .legacy: 256
        case .modern: self == .voip ? 5120 : 4096
        }
    }

    /// The push types that have a topic suffix, for suffix checks.
    static let suffixed: [(pushType: PushType, suffix: String)] = allCases.compactMap { pushType in
        pushType.topicSuffix.map { (pushType, $0) }
    }
}
