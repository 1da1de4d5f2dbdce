/// The app method the system calls for a delivery (SEMANTICS section 6) or for a user's action
/// (section 10); its raw value is the method's Swift name as written in the record.
public enum AppCallback: String, Sendable, Hashable, CaseIterable {
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`.
    case fetchCompletionHandler = "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)"
    /// The deprecated `application(_:didReceiveRemoteNotification:)`.
    case legacy = "application(_:didReceiveRemoteNotification:)"
    /// PushKit's `pushRegistry(_:didReceiveIncomingPushWith:for:completion:)`.
    case pushKit = "pushRegistry(_:didReceiveIncomingPushWith:for:completion:)"
    /// `UNUserNotificationCenterDelegate`'s `userNotificationCenter(_:didReceive:withCompletionHandler:)`.
    case userNotificationCenter = "userNotificationCenter(_:didReceive:withCompletionHandler:)"
    /// The deprecated action method that receives typed text (`UIUserNotificationActionResponseTypedTextKey`).
    case handleActionWithResponseInfo =
        "application(_:handleActionWithIdentifier:forRemoteNotification:withResponseInfo:completionHandler:)"
    /// The deprecated action method without response info.
    case handleAction = "application(_:handleActionWithIdentifier:forRemoteNotification:completionHandler:)"
}
