/// An option of a category's action (`UNNotificationActionOptions`).
public enum ActionOption: String, Sendable, Hashable, CaseIterable {
    /// The action opens the app.
    case foreground
    /// The action is shown as destructive.
    case destructive
    /// The device must be unlocked to perform it.
    case authenticationRequired
}
