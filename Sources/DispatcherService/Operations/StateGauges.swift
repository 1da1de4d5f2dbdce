import Dispatcher

/// How full one worker's partitioned state is (docs/worker.md, "Partitioned state"): what
/// Prometheus, the metrics topic's snapshots and `dev` read.
package struct StateGauges: Sendable, Codable, Equatable {
    /// One bounded table (`dispatch.stateLimits`).
    package struct Table: Sendable, Codable, Equatable {
        /// Entries now.
        package var entries = 0
        /// The most entries the table may have.
        package var limit = 0
        /// Entries dropped to make room since the worker started (dismissed activities).
        package var evicted = 0
        /// Requests refused because the table was full, since the worker started.
        package var refused = 0

        /// An empty table.
        package init() {}

        /// The gauges of a table whose usage is `usage`.
        init(_ usage: StateUsage) {
            entries = usage.count
            limit = usage.limit
            evicted = usage.evicted
            refused = usage.refused
        }
    }

    /// The activities this worker owns.
    package var activities = Table()
    /// The notifications stored for offline devices of this worker's partitions.
    package var stored = Table()
    /// Devices entries of this worker's partitions.
    package var devices = 0
    /// Activities in the index of channel subscriptions (every worker's, read whole).
    package var activityIndex = 0
    /// Malformed state records and Live Activity commands logged and ignored, by topic.
    package var recordsIgnored: [String: Int] = [:]

    /// Empty gauges.
    package init() {}
}
