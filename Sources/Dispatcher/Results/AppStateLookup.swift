public import Notifications

/// The app-states table (SEMANTICS section 9): the last known state of the app on a device.
public protocol AppStateLookup: Sendable {
    /// The state for the normalised (lowercase hex) device token, nil when unknown.
    func appState(forDeviceToken deviceToken: String) -> AppState?
}

extension AppStateLookup {
    /// The state of a request's token given as its record's key (hexadecimal, checked, in any
    /// case), read in place: no table, or an empty one, answers without a string of the token.
    func appState(forKey key: UnsafeRawBufferPointer) -> AppState? {
        if self is NoAppStates { return nil }
        if let table = self as? AppStatesTable, table.count == 0 { return nil }
        return appState(forDeviceToken: DeviceToken.lowercased(key))
    }
}
