public import Notifications

/// The `dispatch` section: the rules' profile, the extension deadline and the worker's limits.
public struct DispatchSettings: Sendable, Hashable {
    /// `dispatch.profile`: `modern` (default) or `legacy` (SEMANTICS section 8).
    public var profile: Profile = .modern
    /// `dispatch.deadline`: the time a service extension (or a whole chain) has.
    public var deadline: Duration = .seconds(30)
    /// `dispatch.expiryGrace`: the time a step has to hand over a best attempt once the deadline passed.
    public var expiryGrace: Duration = .seconds(2)
    /// `dispatch.extensionMemoryLimit`: the bytes a service extension chain may hold at once for one
    /// notification before it is stopped (SEMANTICS section 22); apps and categories may set their own.
    public var extensionMemoryLimit: Int = DispatchSettings.defaultExtensionMemoryLimit
    /// `dispatch.maxInFlight`: requests processed at once by one worker.
    public var maxInFlight: Int = 10_000
    /// `dispatch.guarantee`: `at-least-once` (default) or `exactly-once` (outputs and consumed
    /// offsets in one Kafka transaction per worker; docs/worker.md, "Exactly-once").
    public var guarantee: DeliveryGuarantee = .atLeastOnce
    /// `dispatch.ordering`: `key` (default), `partition` or `unordered`.
    public var ordering: OrderingMode = .key
    /// `dispatch.maxBufferedBytes`: bytes of fetched but unfinished records before partitions pause.
    public var maxBufferedBytes: Int = 64 * 1024 * 1024
    /// `dispatch.resumeRatio`: paused partitions resume when use falls below this share of the limits.
    public var resumeRatio: Double = 0.5
    /// `dispatch.commitInterval`: how often finished offsets are committed.
    public var commitInterval: Duration = .seconds(1)
    /// `dispatch.outputRetryLimit`: how long an output that fails with a retriable error (a broker
    /// down, a leader election) is tried again before its request becomes an `OutputRejected`
    /// dead letter. Well above a broker failover, so an outage never turns requests into dead letters.
    public var outputRetryLimit: Duration = .seconds(300)
    /// `dispatch.stalledPartitionLimit`: how long a partition with records in flight may go without
    /// its committed offset moving before readiness fails and the stall is reported.
    public var stalledPartitionLimit: Duration = .seconds(600)
    /// `dispatch.restoreLimit`: how long the restore of newly assigned partitions' state may take,
    /// its retries included, before the worker gives up and stops (docs/worker.md, "Partitioned
    /// state"). Polling waits for the restore, so keep it well below `max.poll.interval.ms`.
    public var restoreLimit: Duration = .seconds(120)

    /// `dispatch.environment`: the APNs environment the dispatcher stands for (section 11.4).
    public var environment: APNsEnvironment = .production
    /// `dispatch.storagePeriod`: the longest a notification is stored for an offline device (section 16).
    public var storagePeriod: Duration = .seconds(720 * 3_600)
    /// `dispatch.tooManyRequests`: the per-token request limit (section 12.3); nil: no limit.
    public var tooManyRequests: RequestRateLimit? = nil
    /// `dispatch.stateLimits`: the most activities and stored notifications kept in memory
    /// (docs/rules.md, "Memory bound").
    public var stateLimits = StateLimits()

    /// The longest `dispatch.storagePeriod` and `dispatch.tooManyRequests.window`: a year.
    package static let longestStoragePeriod: Duration = .seconds(8_760 * 3_600)

    /// The longest deadline (`dispatch.deadline`, an app's or a category's): Apple gives 30 s; a
    /// chain of webhooks may need more, but a record in flight holds memory, revocations and
    /// shutdown wait for it, and the pod's termination grace must cover it.
    package static let longestDeadline: Duration = .seconds(600)
    /// The default `dispatch.extensionMemoryLimit`: 24 MiB, the limit seen in the crash logs of
    /// extensions the system killed ("exceeded mem limit: ActiveHard 24 MB"); Apple publishes none.
    public static let defaultExtensionMemoryLimit = 24 * 1_048_576
    /// The largest `extensionMemoryLimit` (4 GiB): far above any device's, and small enough that
    /// the bytes a chain holds, added up, never overflow.
    package static let largestExtensionMemoryLimit = 4 * 1_073_741_824

    /// The longest `dispatch.expiryGrace`.
    package static let longestExpiryGrace: Duration = .seconds(60)

    /// The defaults.
    public init() {}
}
