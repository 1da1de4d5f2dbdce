/// What a content extension's `didReceive(_:completionHandler:)` answers for an action
/// (`UNNotificationContentExtensionResponseOption`).
public enum ResponseOption: String, Sendable, Hashable, CaseIterable {
    /// The interface stays open; the action goes no further.
    case doNotDismiss
    /// The interface closes; the action goes no further.
    case dismiss
    /// The interface closes and the action is delivered to the app.
    case dismissAndForwardAction
}
