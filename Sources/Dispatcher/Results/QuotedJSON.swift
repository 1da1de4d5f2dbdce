package import Notifications

// The text of the enumerations every delivery record writes, quoted, as literals: the writer
// copies a literal with a few moves, where a `rawValue` went through a `String` and the escape
// check (some 180 instructions each, five to eight of them a delivery; docs/performance.md).
// QuotedJSONTests checks every case against its `rawValue`.

extension PushType {
    /// The push type as a JSON string: its raw value in quotes.
    package var quotedJSON: StaticString {
        switch self {
        case .alert: #""alert""#
        case .background: #""background""#
        case .voip: #""voip""#
        case .complication: #""complication""#
        case .fileprovider: #""fileprovider""#
        case .location: #""location""#
        case .liveactivity: #""liveactivity""#
        case .pushtotalk: #""pushtotalk""#
        case .widgets: #""widgets""#
        case .controls: #""controls""#
        case .mdm: #""mdm""#
        }
    }
}

extension Disposition {
    /// The disposition as a JSON string: its raw value in quotes.
    package var quotedJSON: StaticString {
        switch self {
        case .modified: #""modified""#
        case .original: #""original""#
        case .discarded: #""discarded""#
        }
    }
}

extension DeliveryReason {
    /// The reason as a JSON string: its raw value in quotes.
    package var quotedJSON: StaticString {
        switch self {
        case .legacyProfile: #""legacy-profile""#
        case .pushTypeNotModifiable: #""push-type-not-modifiable""#
        case .noAlert: #""no-alert""#
        case .notAuthorized: #""not-authorized""#
        case .alertsOff: #""alerts-off""#
        case .notMutable: #""not-mutable""#
        case .noExtension: #""no-extension""#
        case .`extension`: #""extension""#
        case .extensionUnchanged: #""extension-unchanged""#
        case .extensionExpiredBestAttempt: #""extension-expired-best-attempt""#
        case .extensionTimeout: #""extension-timeout""#
        case .extensionFailed: #""extension-failed""#
        case .extensionMemoryLimit: #""extension-memory-limit""#
        case .alertRemoved: #""alert-removed""#
        case .outputTooLarge: #""output-too-large""#
        case .expired: #""expired""#
        case .appForceQuit: #""app-force-quit""#
        case .extensionFiltered: #""extension-filtered""#
        case .notStored: #""not-stored""#
        case .superseded: #""superseded""#
        case .collapsed: #""collapsed""#
        }
    }
}

extension BadgeEffect {
    /// The badge effect as a JSON string: its raw value in quotes.
    package var quotedJSON: StaticString {
        switch self {
        case .set: #""set""#
        case .clear: #""clear""#
        case .unchanged: #""unchanged""#
        }
    }
}

extension AppState {
    /// The app state as a JSON string: its raw value in quotes.
    package var quotedJSON: StaticString {
        switch self {
        case .foreground: #""foreground""#
        case .background: #""background""#
        case .suspended: #""suspended""#
        case .notRunning: #""notRunning""#
        case .forceQuit: #""forceQuit""#
        }
    }
}

extension AppCallback {
    /// The callback as a JSON string: its raw value in quotes.
    package var quotedJSON: StaticString {
        switch self {
        case .fetchCompletionHandler: #""application(_:didReceiveRemoteNotification:fetchCompletionHandler:)""#
        case .legacy: #""application(_:didReceiveRemoteNotification:)""#
        case .pushKit: #""pushRegistry(_:didReceiveIncomingPushWith:for:completion:)""#
        case .userNotificationCenter: #""userNotificationCenter(_:didReceive:withCompletionHandler:)""#
        case .handleActionWithResponseInfo: #""application(_:handleActionWithIdentifier:forRemoteNotification:withResponseInfo:completionHandler:)""#
        case .handleAction: #""application(_:handleActionWithIdentifier:forRemoteNotification:completionHandler:)""#
        }
    }
}

extension InterruptionLevel {
    /// The interruption level as a JSON string: its raw value in quotes.
    package var quotedJSON: StaticString {
        switch self {
        case .passive: #""passive""#
        case .active: #""active""#
        case .timeSensitive: #""time-sensitive""#
        case .critical: #""critical""#
        }
    }
}

extension UserAlert.FocusEffect {
    /// The Focus effect as a JSON string: its raw value in quotes.
    package var quotedJSON: StaticString {
        switch self {
        case .off: #""off""#
        case .allowed: #""allowed""#
        case .breakthrough: #""breakthrough""#
        case .silenced: #""silenced""#
        }
    }
}

extension UserAlert {
    /// ``willPresentMethod`` as a JSON string.
    package static let willPresentQuotedJSON: StaticString = #""userNotificationCenter(_:willPresent:withCompletionHandler:)""#
}
