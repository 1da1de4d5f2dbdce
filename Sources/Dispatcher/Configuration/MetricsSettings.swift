/// The `metrics` section: how the worker publishes its metrics.
public struct MetricsSettings: Sendable, Hashable {
    /// `metrics.interval`: how often a snapshot goes to the metrics topic.
    public var interval: Duration = .seconds(5)
    /// `metrics.workerId`: the worker's name in snapshots; nil lets the worker pick one.
    public var workerId: String? = nil
    /// `metrics.prefix`: the prefix of every metric name.
    public var prefix: String = "notification_dispatcher"

    /// The defaults.
    public init() {}
}
