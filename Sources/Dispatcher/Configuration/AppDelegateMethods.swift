/// Which remote-notification methods an app's delegate implements (SEMANTICS section 6).
public enum AppDelegateMethods: String, Sendable, Hashable, CaseIterable {
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` (the default).
    case fetchCompletionHandler
    /// Only the deprecated `application(_:didReceiveRemoteNotification:)`.
    case legacy
    /// Both; only the fetchCompletionHandler method is called.
    case both
    /// Neither.
    case none

    /// Whether the delegate implements the fetchCompletionHandler method.
    package var implementsFetchCompletionHandler: Bool { self == .fetchCompletionHandler || self == .both }

    /// Whether the delegate implements the deprecated method.
    package var implementsLegacy: Bool { self == .legacy || self == .both }
}
