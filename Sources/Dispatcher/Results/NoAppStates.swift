public import Notifications

/// An empty app-states table (no `topics.appStates`, or offline).
public struct NoAppStates: AppStateLookup {
    /// Creates the empty table.
    public init() {}

    /// Always nil.
    public func appState(forDeviceToken deviceToken: String) -> AppState? { nil }

    /// No state, for any key.
    public func appState(forKey key: UnsafeRawBufferPointer) -> AppState? { nil }
}
