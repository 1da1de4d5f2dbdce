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
    /// The badge counts of this worker's partitions (section 21); empty when no app keeps a ledger.
    package var badges = Table()
    /// Devices entries of this worker's partitions.
    package var devices = 0
    /// Activities in the index of channel subscriptions (every worker's, read whole).
    package var activityIndex = 0
    /// Malformed state records and Live Activity commands logged and ignored, by topic.
    package var recordsIgnored: [String: Int] = [:]
    /// Restored records whose key belongs to another partition under the worker's partitioner, by
    /// table (`activities`, `stored`, `devices`, `badges`), over every restore.
    package var misplacedRecords: [String: Int] = [:]
    /// The partitioner the requests topic's keyed records follow; nil until a sample settled it.
    package var requestsPartitioner: RequestsPartitioner?

    /// What the sample of the requests topic's keys found, beside the worker's own partitioner.
    package struct RequestsPartitioner: Sendable, Codable, Equatable {
        /// The `found` value when no one partitioner places every sampled key.
        package static let noneFound = "none"
        /// The partitioner that places every sampled key where it was read (`murmur2_random`,
        /// `consistent_random`, `fnv1a_random`), or ``noneFound``.
        package var found: String
        /// The worker's own (`kafka.properties.partitioner`), as the same names give it.
        package var configured: String
        /// Whether the requests are keyed otherwise than the worker places keys: each Live
        /// Activity update then costs a forward.
        package var isMismatch: Bool { found != configured }

        /// A finding beside `configured`.
        package init(found: String, configured: String) {
            self.found = found
            self.configured = configured
        }
    }

    /// Empty gauges.
    package init() {}

    private enum CodingKeys: String, CodingKey {
        case activities, stored, badges, devices, activityIndex, recordsIgnored, misplacedRecords, requestsPartitioner
    }

    /// Decodes gauges; older workers wrote no `misplacedRecords` and no `badges`, so `top` reads
    /// every worker of a group while it is upgraded. (Encoding is the synthesized one.)
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        activities = try container.decode(Table.self, forKey: .activities)
        stored = try container.decode(Table.self, forKey: .stored)
        badges = try container.decodeIfPresent(Table.self, forKey: .badges) ?? Table()
        devices = try container.decode(Int.self, forKey: .devices)
        activityIndex = try container.decode(Int.self, forKey: .activityIndex)
        recordsIgnored = try container.decode([String: Int].self, forKey: .recordsIgnored)
        misplacedRecords = try container.decodeIfPresent([String: Int].self, forKey: .misplacedRecords) ?? [:]
        requestsPartitioner = try container.decodeIfPresent(RequestsPartitioner.self, forKey: .requestsPartitioner)
    }
}
