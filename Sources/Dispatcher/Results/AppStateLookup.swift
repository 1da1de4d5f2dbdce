public import Notifications

/// The app-states table (SEMANTICS section 9): the last known state of the app on a device.
public protocol AppStateLookup: Sendable {
    /// The state for the normalised (lowercase hex) device token, nil when unknown.
    func appState(forDeviceToken deviceToken: String) -> AppState?

    /// The state of a request's token given as its record's key (hexadecimal digits in any case,
    /// checked by validation), read where the key lies: a request decided in place makes no
    /// string of its token, so a table that can answer without one (having no entries) should.
    func appState(forKey key: UnsafeRawBufferPointer) -> AppState?
}

extension AppStateLookup {
    /// The state of the key's lowercase token, through ``appState(forDeviceToken:)``.
    public func appState(forKey key: UnsafeRawBufferPointer) -> AppState? {
        appState(forDeviceToken: DeviceToken.lowercased(key))
    }
}
