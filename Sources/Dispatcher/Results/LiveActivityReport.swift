/// A delivery's `liveActivity` field (SEMANTICS section 14.6): what a Live Activity push did to
/// the activity it addressed.
public struct LiveActivityReport: Sendable, Hashable {
    /// `activityToken`: the new token for `start`, else the request's normalised key (a
    /// broadcast's: the subscribed activity's token).
    public var activityToken: String
    /// `event`: the payload's `aps.event`, nil when absent.
    public var event: LiveActivityEvent?
    /// `result`: the row of section 14.3 that matched.
    public var result: LiveActivityResult
    /// `state`: the activity's state after the push (section 14.4), nil when there is no activity.
    public var state: ActivityState?
    /// `alerted`: the push started, updated or ended the activity and has alert text.
    public var alerted: Bool

    /// A report of its fields.
    package init(activityToken: String, event: LiveActivityEvent?, result: LiveActivityResult, state: ActivityState?, alerted: Bool) {
        self.activityToken = activityToken
        self.event = event
        self.result = result
        self.state = state
        self.alerted = alerted
    }
}

/// `aps.event` of a Live Activity push.
public enum LiveActivityEvent: String, Sendable, Hashable, CaseIterable {
    /// Push to start: creates an activity.
    case start
    /// Updates an activity's content.
    case update
    /// Ends an activity.
    case end
}

/// The device's result of a Live Activity push: the rows of SEMANTICS section 14.3, in order.
public enum LiveActivityResult: String, Sendable, Hashable, CaseIterable {
    /// Row 1: a field the device needs is missing, or two exclusive ones are present.
    case malformed
    /// Row 2: a start naming a channel the channels table does not have for the app.
    case channelUnknown = "channel-unknown"
    /// Row 3: a new activity.
    case started
    /// Row 4: an update or end for no activity of the app.
    case noActivity = "no-activity"
    /// Row 5: the activity has ended.
    case endedIgnored = "ended-ignored"
    /// Row 6: `timestamp` not newer than the activity's.
    case staleIgnored = "stale-ignored"
    /// Row 7: a priority-10 push over the activity's budget (section 14.5).
    case throttled
    /// Row 8: the activity was updated.
    case updated
    /// Row 9: the activity ended.
    case ended

    /// Whether the push changed the activity (rows 3, 8 and 9), so an activities record follows.
    package var changesActivity: Bool { self == .started || self == .updated || self == .ended }

    /// The row of section 14.3's table.
    package var row: Int {
        switch self {
        case .malformed: 1
        case .channelUnknown: 2
        case .started: 3
        case .noActivity: 4
        case .endedIgnored: 5
        case .staleIgnored: 6
        case .throttled: 7
        case .updated: 8
        case .ended: 9
        }
    }
}

/// A change to the activities table that a delivery is followed by (section 14.6): the activity's
/// new entry and, when the table was full, the dismissed activity dropped to make room.
package struct ActivityChange: Sendable, Hashable {
    /// The activity token (the record's key).
    package var activityToken: String
    /// The new entry (the record's value).
    package var entry: ActivityEntry
    /// The token of the dismissed activity dropped for it (a tombstone follows), nil when none.
    package var evicted: String?

    /// A change of `activityToken` to `entry`.
    package init(activityToken: String, entry: ActivityEntry, evicted: String? = nil) {
        self.activityToken = activityToken
        self.entry = entry
        self.evicted = evicted
    }
}
