public import Notifications
public import Records

/// The app-states table (SEMANTICS section 9): the last known state of the app on a device.
public protocol AppStateLookup: Sendable {
    /// The state for the normalised (lowercase hex) device token, nil when unknown.
    func appState(forDeviceToken deviceToken: String) -> AppState?

    /// The state of a request's token given as its record's key (hexadecimal digits in any case,
    /// checked by validation), read where the key lies: a request decided in place makes no
    /// string of its token, so a table that can answer without one (having no entries) should.
    func appState(forKey key: UnsafeRawBufferPointer) -> AppState?

    /// ``appState(forKey:)`` of a record's key. The record is what the rules pass: reading the
    /// key in a closure that calls this on `any AppStateLookup` made Swift copy the existential
    /// (a retain and a release per request).
    func appState(forKeyOf record: borrowing RecordView) -> AppState?
}

extension AppStateLookup {
    /// The state of the key's lowercase token, through ``appState(forDeviceToken:)``.
    public func appState(forKey key: UnsafeRawBufferPointer) -> AppState? {
        appState(forDeviceToken: DeviceToken.lowercased(key))
    }

    /// ``appState(forKey:)`` of the record's key (none: an empty key).
    public func appState(forKeyOf record: borrowing RecordView) -> AppState? {
        record.withUnsafeKeyBytes { appState(forKey: $0 ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
    }
}
