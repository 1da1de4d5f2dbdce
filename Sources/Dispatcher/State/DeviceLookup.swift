import Notifications
package import Records

/// The devices table (SEMANTICS section 11.2) as the rules read it.
package protocol DeviceLookup: Sendable {
    /// The entry of the normalised (lowercase hex) device token, nil when the table has none.
    func device(forDeviceToken deviceToken: String) -> DeviceEntry?

    /// The entry of a request's token given as its record's key (hexadecimal, checked, in any
    /// case), read in place: a table without entries answers without a string of the token.
    ///
    /// The record, not its key's bytes, is what the caller passes: reading the key in a closure
    /// that calls this on `any DeviceLookup` made Swift copy the existential (a retain and a
    /// release per request).
    func device(forKeyOf record: borrowing RecordView) -> DeviceEntry?
}

extension DeviceLookup {
    /// The entry of the key's lowercase token, through ``device(forDeviceToken:)``.
    package func device(forKeyOf record: borrowing RecordView) -> DeviceEntry? {
        record.withUnsafeKeyBytes { device(forDeviceToken: DeviceToken.lowercased($0 ?? UnsafeRawBufferPointer(start: nil, count: 0))) }
    }
}
