public import Notifications

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
