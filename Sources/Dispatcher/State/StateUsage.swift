/// How full a bounded state table is (`dispatch.stateLimits`, docs/rules.md "Memory bound"): what
/// the worker exports as gauges and counters.
package struct StateUsage: Sendable, Hashable {
    /// Entries now.
    package var count: Int
    /// The most entries the table may have.
    package var limit: Int
    /// Entries dropped to make room since the table was made (dismissed activities).
    package var evicted: Int
    /// Requests refused with `ServiceUnavailable` because the table was full, since the table was made.
    package var refused: Int

    /// A usage of its fields.
    package init(count: Int, limit: Int, evicted: Int, refused: Int) {
        self.count = count
        self.limit = limit
        self.evicted = evicted
        self.refused = refused
    }

    /// Whether the table is at its limit.
    package var isFull: Bool { count >= limit }
}
