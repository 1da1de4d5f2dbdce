/// Everything the rules read besides the request and the configuration (SEMANTICS section 11.2):
/// the app-states and devices tables, and the in-memory request counts of section 12.3. The one
/// place the dispatcher reads state from, for `dispatch` offline and for the worker alike.
public struct StateTables: Sendable {
    /// The app-states table (section 9).
    public var appStates: any AppStateLookup
    /// The devices table (section 11.2).
    public var devices: any DeviceLookup
    /// The accepted requests per token (section 12.3); nil when `dispatch.tooManyRequests` is not set.
    public var requestRates: RequestRateWindow?

    /// Tables made of `appStates`, `devices` and `requestRates`; empty ones by default.
    public init(
        appStates: any AppStateLookup = NoAppStates(), devices: any DeviceLookup = NoDevices(),
        requestRates: RequestRateWindow? = nil
    ) {
        self.appStates = appStates
        self.devices = devices
        self.requestRates = requestRates
    }
}
