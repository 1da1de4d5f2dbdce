/// Everything the rules read besides the request and the configuration (SEMANTICS section 11.2):
/// the app-states, devices, channels, activities and stored tables, the in-memory request counts
/// of section 12.3 and the Live Activity budgets of section 14.5. The one place the dispatcher
/// reads state from, for `dispatch` offline and for the worker alike.
///
/// The tables are references: the rules change the activities and stored tables, and count
/// requests and budgets, while preparing a record, so records that share state must be prepared
/// one after another, in order. A table left nil is one the caller does not keep: the rules read
/// it as empty and their changes to it are only written as output records.
package struct StateTables: Sendable {
    /// The app-states table (section 9).
    package var appStates: any AppStateLookup
    /// The devices table (section 11.2).
    package var devices: any DeviceLookup
    /// The accepted requests per token (section 12.3); nil when `dispatch.tooManyRequests` is not set.
    package var requestRates: RequestRateWindow?
    /// The channels table (section 11.2): every worker reads all of it.
    package var channels: ChannelsTable?
    /// The activities table (section 11.2), keyed by activity token.
    package var activities: ActivitiesTable?
    /// Where a broadcast finds the activities subscribed to its channel (section 15), when that is
    /// not ``activities``: a worker owns only the activities of its partitions, and reads the
    /// whole activities topic into this index for the fan-out. nil: ``activities``.
    package var activityIndex: ActivitiesTable?
    /// The stored notifications (section 16), keyed by `<device token>/<bundle ID>`.
    package var stored: StoredNotifications?
    /// The Live Activity budgets (section 14.5), keyed by activity token.
    package var liveActivityBudgets: LiveActivityBudgets?
    /// The badge ledger (section 21), keyed by `<device token>/<bundle ID>`; nil: no ledger is
    /// kept, so every count starts at 0 and is only written as output records.
    package var badges: BadgesTable?

    /// Tables made of `appStates`, `devices` and `requestRates`; empty ones by default.
    package init(
        appStates: any AppStateLookup = NoAppStates(), devices: any DeviceLookup = NoDevices(),
        requestRates: RequestRateWindow? = nil
    ) {
        self.appStates = appStates
        self.devices = devices
        self.requestRates = requestRates
    }

    /// Tables for sections 9 to 16: those given, with new empty channels, activities, stored and
    /// budget tables bounded by `limits`.
    package init(
        appStates: any AppStateLookup, devices: any DeviceLookup, requestRates: RequestRateWindow?, limits: StateLimits
    ) {
        self.init(appStates: appStates, devices: devices, requestRates: requestRates)
        channels = ChannelsTable()
        activities = ActivitiesTable(limit: limits.activities)
        stored = StoredNotifications(limit: limits.stored)
        liveActivityBudgets = LiveActivityBudgets()
        badges = BadgesTable(limit: limits.badges)
    }
}
