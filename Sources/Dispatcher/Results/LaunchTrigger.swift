/// Why the app is launched (the launch record's `trigger`).
public enum LaunchTrigger: String, Sendable, Hashable, CaseIterable {
    /// The system launches the app in the background to deliver the push.
    case backgroundDelivery
    /// The app launches when the user opens the notification.
    case userOpensNotification
}
