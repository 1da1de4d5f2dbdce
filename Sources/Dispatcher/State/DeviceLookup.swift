import Notifications

/// The devices table (SEMANTICS section 11.2) as the rules read it.
package protocol DeviceLookup: Sendable {
    /// The entry of the normalised (lowercase hex) device token, nil when the table has none.
    func device(forDeviceToken deviceToken: String) -> DeviceEntry?

    /// The entry of a request's token given as its record's key (hexadecimal, checked, in any
    /// case), read in place: a table without entries answers without a string of the token.
    func device(forKey key: UnsafeRawBufferPointer) -> DeviceEntry?
}

extension DeviceLookup {
    /// The entry of the key's lowercase token, through ``device(forDeviceToken:)``.
    package func device(forKey key: UnsafeRawBufferPointer) -> DeviceEntry? {
        device(forDeviceToken: DeviceToken.lowercased(key))
    }
}
