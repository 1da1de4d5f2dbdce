/// An empty devices table: every token passes the token checks with the defaults.
public struct NoDevices: DeviceLookup {
    /// The empty table.
    public init() {}

    /// Always nil.
    public func device(forDeviceToken deviceToken: String) -> DeviceEntry? { nil }
}
