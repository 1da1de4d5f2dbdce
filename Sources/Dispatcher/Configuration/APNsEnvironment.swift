/// `dispatch.environment`: the APNs environment the dispatcher stands for (SEMANTICS section 11.4);
/// a devices entry of the other environment is `BadDeviceToken` (section 12.1).
public enum APNsEnvironment: String, Sendable, Hashable, CaseIterable {
    /// `api.push.apple.com` (the default).
    case production
    /// `api.sandbox.push.apple.com`.
    case sandbox
}
