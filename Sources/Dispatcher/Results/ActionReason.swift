/// Why a response is handled as it is (the action record's `reason`, SEMANTICS section 10).
public enum ActionReason: String, Sendable, Hashable, CaseIterable {
    /// A media command, for the content extension.
    case mediaControl = "media-control"
    /// A dismissal the category does not report (no `customDismissAction`).
    case dismissNotReported = "dismiss-not-reported"
    /// A custom action the presenting content extension answers.
    case contentExtension = "content-extension"
    /// Delivered to the app's action handler.
    case deliveredToApp = "delivered-to-app"
    /// Delivered to the app, which has no method to receive it.
    case noHandler = "no-handler"
}
