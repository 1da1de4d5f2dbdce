public import JSON

/// The typed view of a payload's `aps` dictionary: every documented key, plus the unknown ones kept.
///
/// The type rules of SEMANTICS.md section 2 are enforced when the view is made (`Payload(validating:)`).
/// The Live Activity keys are not among those rules: they are typed here when they have their documented
/// type and otherwise left only in the payload's JSON.
public struct APS: Sendable, Hashable {
    /// `alert`: a string or an object.
    public internal(set) var alert: Alert?
    /// `badge`: an integer (0 clears the badge).
    public internal(set) var badge: JSONNumber?
    /// `sound`: a name or the critical-alert object.
    public internal(set) var sound: Sound?
    /// `content-available`: an integer, 1 for a background update.
    public internal(set) var contentAvailable: JSONNumber?
    /// `mutable-content`: an integer, 1 to let a service extension modify the notification.
    public internal(set) var mutableContent: JSONNumber?
    /// `category`.
    public internal(set) var category: String?
    /// `thread-id`.
    public internal(set) var threadID: String?
    /// `target-content-id`.
    public internal(set) var targetContentID: String?
    /// `interruption-level`.
    public internal(set) var interruptionLevel: InterruptionLevel?
    /// `relevance-score`: a number.
    public internal(set) var relevanceScore: JSONNumber?
    /// `filter-criteria`.
    public internal(set) var filterCriteria: String?
    /// Live Activity `stale-date` (UNIX seconds), when a number.
    public internal(set) var staleDate: JSONNumber?
    /// Live Activity `content-state`, when an object.
    public internal(set) var contentState: JSONObject?
    /// Live Activity `timestamp` (UNIX seconds), when a number.
    public internal(set) var timestamp: JSONNumber?
    /// Live Activity `event` (`start`, `update`, `end`), when a string.
    public internal(set) var event: String?
    /// Live Activity `dismissal-date` (UNIX seconds), when a number.
    public internal(set) var dismissalDate: JSONNumber?
    /// Live Activity `attributes-type`, when a string.
    public internal(set) var attributesType: String?
    /// Live Activity `attributes`, when an object.
    public internal(set) var attributes: JSONObject?
    /// Keys not documented, kept as they were.
    public internal(set) var otherKeys: JSONObject = JSONObject()

    /// An empty view.
    init() {}
}
