/// Why the app is launched (the launch record's `trigger`), by a delivery or by a user's response.
public enum LaunchTrigger: String, Sendable, Hashable, CaseIterable {
    /// The system launches the app in the background to deliver the push.
    case backgroundDelivery
    /// The app launches when the user opens the notification.
    case userOpensNotification
    /// The app launches in the background to handle an action without the `foreground` option
    /// (SEMANTICS section 10).
    case userSelectsBackgroundAction
}
