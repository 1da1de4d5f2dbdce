public import Notifications

/// The app-states table (SEMANTICS section 9): the last known state of the app on a device.
public protocol AppStateLookup: Sendable {
    /// The state for the normalised (lowercase hex) device token, nil when unknown.
    func appState(forDeviceToken deviceToken: String) -> AppState?
}

/// An empty app-states table (no `topics.appStates`, or offline).
public struct NoAppStates: AppStateLookup {
    /// Creates the empty table.
    public init() {}

    /// Always nil.
    public func appState(forDeviceToken deviceToken: String) -> AppState? { nil }
}

/// A fixed app-states table, for the `dispatch` command and tests.
public struct FixedAppStates: AppStateLookup {
    /// The states by normalised device token.
    public var states: [String: AppState]

    /// Creates a table of `states`.
    public init(_ states: [String: AppState]) {
        self.states = states
    }

    /// The state of `deviceToken`, nil when not in the table.
    public func appState(forDeviceToken deviceToken: String) -> AppState? { states[deviceToken] }
}
