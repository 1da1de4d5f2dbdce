/// An empty devices table: every token passes the token checks with the defaults.
package struct NoDevices: DeviceLookup {
    /// The empty table.
    package init() {}

    /// Always nil.
    package func device(forDeviceToken deviceToken: String) -> DeviceEntry? { nil }

    /// No entry, for any key.
    package func device(forKey key: UnsafeRawBufferPointer) -> DeviceEntry? { nil }
}
