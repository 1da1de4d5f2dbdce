/// The `topics` section: the names of the topics the dispatcher reads and writes.
public struct TopicSettings: Sendable, Hashable {
    /// `topics.requests`: provider requests (input).
    public var requests: String = "notifications.requests"
    /// `topics.deliveries`: one delivery record per valid request.
    public var deliveries: String = "notifications.deliveries"
    /// `topics.launches`: launch records.
    public var launches: String = "notifications.launches"
    /// `topics.deadLetter`: invalid requests and responses.
    public var deadLetter: String = "notifications.dead-letter"
    /// `topics.metrics`: periodic metric snapshots.
    public var metrics: String = "notifications.metrics"
    /// `topics.responses`: what users did with delivered notifications (input, SEMANTICS section 10).
    public var responses: String = "notifications.responses"
    /// `topics.actions`: one action record per valid response.
    public var actions: String = "notifications.actions"
    /// `topics.appStates`: the compacted app-states topic (SEMANTICS section 9); nil when not used.
    public var appStates: String? = nil
    /// `topics.devices`: the compacted devices topic (section 11.2); nil (set to `""`) when not used.
    public var devices: String? = "notifications.devices"
    /// `topics.channels`: the compacted channels topic (section 11.2; read from section 15 on).
    public var channels: String = "notifications.channels"
    /// `topics.activities`: the compacted activities topic (section 11.2; read from section 14 on).
    public var activities: String = "notifications.activities"
    /// `topics.stored`: the stored-notifications topic (section 16).
    public var stored: String = "notifications.stored"
    /// `topics.activityRepartition`: the workers' internal topic of Live Activity commands, keyed
    /// by activity token (a broadcast's fan-out, a command read on a partition that does not own
    /// its activity): the owner of the token's partition executes them (docs/worker.md,
    /// "Partitioned state"). Co-partitioned with the requests topic.
    public var activityRepartition: String = "notifications.activities-repartition"
    /// `topics.feedback`: one feedback record per token dead letter (section 12.2).
    public var feedback: String = "notifications.feedback"
    /// `topics.badges`: the compacted badge ledger (section 21), co-partitioned with the requests
    /// topic: written by the dispatcher and, to reset a count, by providers and apps.
    public var badges: String = "notifications.badges"

    /// The defaults.
    public init() {}
}
