/// Which method of the app receives the actions the user picks (SEMANTICS section 10).
public enum ActionHandler: String, Sendable, Hashable, CaseIterable {
    /// `UNUserNotificationCenterDelegate`'s `userNotificationCenter(_:didReceive:withCompletionHandler:)` (the default).
    case userNotificationCenter
    /// The deprecated `application(_:handleActionWithIdentifier:forRemoteNotification:withResponseInfo:completionHandler:)`.
    case legacyWithResponseInfo
    /// The deprecated `application(_:handleActionWithIdentifier:forRemoteNotification:completionHandler:)`.
    case legacy
    /// None: actions reach the app but no method handles them.
    case none

    /// Whether it is one of the deprecated app-delegate methods of seed 001, for which the default
    /// action is no action (it follows the remote-notification methods of section 6).
    package var isLegacy: Bool { self == .legacy || self == .legacyWithResponseInfo }
}
