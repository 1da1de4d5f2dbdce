/// The app method the system calls for a delivery (SEMANTICS section 6); its raw value is the
/// method's Swift name as written in the delivery record.
public enum AppCallback: String, Sendable, Hashable, CaseIterable {
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`.
    case fetchCompletionHandler = "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)"
    /// The deprecated `application(_:didReceiveRemoteNotification:)`.
    case legacy = "application(_:didReceiveRemoteNotification:)"
    /// PushKit's `pushRegistry(_:didReceiveIncomingPushWith:for:completion:)`.
    case pushKit = "pushRegistry(_:didReceiveIncomingPushWith:for:completion:)"
}
