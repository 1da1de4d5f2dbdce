/// An entry of `apps.B.entitlements` (SEMANTICS section 11.4): a capability the app has.
public enum Entitlement: String, Sendable, Hashable, CaseIterable {
    /// `com.apple.developer.usernotifications.filtering`: the service extension may suppress a
    /// notification (section 13).
    case filtering
    /// The Time Sensitive Notifications capability (section 17.2).
    case timeSensitive
    /// The critical-alerts entitlement (section 17.2).
    case criticalAlerts
    /// Broadcast push enabled for the bundle ID (section 15).
    case broadcast
}
