/// `dispatch.stateLimits`: the most entries the dispatcher keeps in memory in its tables that grow
/// with traffic (docs/rules.md, "Memory bound"). A request that would need one more is a dead letter
/// with reason `ServiceUnavailable` (503), once dismissed activities were dropped to make room.
public struct StateLimits: Sendable, Hashable {
    /// The default of each limit.
    package static let defaultLimit = 1_000_000

    /// `activities`: Live Activities kept (section 14).
    public var activities: Int = StateLimits.defaultLimit
    /// `stored`: notifications stored for offline devices (section 16).
    public var stored: Int = StateLimits.defaultLimit
    /// `badges`: badge counts kept for devices of apps with a ledger (section 21).
    public var badges: Int = StateLimits.defaultLimit

    /// The defaults.
    public init() {}

    /// Limits of `activities` and `stored` entries.
    public init(activities: Int, stored: Int) {
        self.activities = activities
        self.stored = stored
    }
}
