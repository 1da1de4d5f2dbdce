public import Notifications

/// The app-states table (SEMANTICS section 9): the last known state of the app on a device.
public protocol AppStateLookup: Sendable {
    /// The state for the normalised (lowercase hex) device token, nil when unknown.
    func appState(forDeviceToken deviceToken: String) -> AppState?
}
