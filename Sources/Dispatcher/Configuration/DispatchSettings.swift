public import Notifications

/// The `dispatch` section: the rules' profile, the extension deadline and the worker's limits.
public struct DispatchSettings: Sendable, Hashable {
    /// `dispatch.profile`: `modern` (default) or `legacy` (SEMANTICS section 8).
    public var profile: Profile = .modern
    /// `dispatch.deadline`: the time a service extension (or a whole chain) has.
    public var deadline: Duration = .seconds(30)
    /// `dispatch.expiryGrace`: the time a step has to hand over a best attempt once the deadline passed.
    public var expiryGrace: Duration = .seconds(2)
    /// `dispatch.maxInFlight`: requests processed at once by one worker.
    public var maxInFlight: Int = 10_000
    /// `dispatch.ordering`: `key` (default), `partition` or `unordered`.
    public var ordering: OrderingMode = .key
    /// `dispatch.maxBufferedBytes`: bytes of fetched but unfinished records before partitions pause.
    public var maxBufferedBytes: Int = 64 * 1024 * 1024
    /// `dispatch.resumeRatio`: paused partitions resume when use falls below this share of the limits.
    public var resumeRatio: Double = 0.5
    /// `dispatch.commitInterval`: how often finished offsets are committed.
    public var commitInterval: Duration = .seconds(1)

    /// The defaults.
    public init() {}
}
