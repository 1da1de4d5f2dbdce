import Notifications
package import Records

/// The devices table (SEMANTICS section 11.2) as the rules read it.
package protocol DeviceLookup: Sendable {
    /// The entry of the normalised (lowercase hex) device token, nil when the table has none.
    func device(forDeviceToken deviceToken: String) -> DeviceEntry?

    /// The entry of a request's token given as its record's key (hexadecimal, checked, in any
    /// case), read in place: a table without entries answers without a string of the token.
    func device(forKey key: UnsafeRawBufferPointer) -> DeviceEntry?

    /// ``device(forKey:)`` of a record's key. The record is what the rules pass: reading the key
    /// in a closure that calls this on `any DeviceLookup` made Swift copy the existential (a
    /// retain and a release per request).
    func device(forKeyOf record: borrowing RecordView) -> DeviceEntry?
}

extension DeviceLookup {
    /// The entry of the key's lowercase token, through ``device(forDeviceToken:)``.
    package func device(forKey key: UnsafeRawBufferPointer) -> DeviceEntry? {
        device(forDeviceToken: DeviceToken.lowercased(key))
    }

    /// ``device(forKey:)`` of the record's key (none: an empty key).
    package func device(forKeyOf record: borrowing RecordView) -> DeviceEntry? {
        record.withUnsafeKeyBytes { device(forKey: $0 ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
    }
}
