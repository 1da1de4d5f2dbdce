/// The devices table (SEMANTICS section 11.2) as the rules read it.
package protocol DeviceLookup: Sendable {
    /// The entry of the normalised (lowercase hex) device token, nil when the table has none.
    func device(forDeviceToken deviceToken: String) -> DeviceEntry?
}
