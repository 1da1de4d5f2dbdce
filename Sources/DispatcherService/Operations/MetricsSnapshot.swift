package import Foundation

/// One worker's state at one moment, as published to the metrics topic every `metrics.interval`
/// (JSON, keyed by ``workerId``) and shown by `top`.
package struct MetricsSnapshot: Sendable, Codable, Equatable {
    /// Counters since the worker started.
    package struct Totals: Sendable, Codable, Equatable {
        /// Records consumed (requests and responses).
        package var consumed = 0
        /// Requests delivered, by disposition (`modified`, `original`, `discarded`).
        package var deliveries: [String: Int] = [:]
        /// Requests delivered, by `disposition/reason`.
        package var deliveryReasons: [String: Int] = [:]
        /// Dead letters, by APNs reason.
        package var deadLetters: [String: Int] = [:]
        /// Responses handled, by `handledBy/reason` (SEMANTICS section 10).
        package var actions: [String: Int] = [:]
        /// Launch records, by trigger.
        package var launches: [String: Int] = [:]
        /// Feedback records (SEMANTICS section 12.2), by token reason.
        package var feedback: [String: Int] = [:]
        /// Output records acknowledged, by topic.
        package var outputs: [String: Int] = [:]
        /// Successful and failed commits.
        package var commits = 0
        /// Failed commits.
        package var commitFailures = 0
        /// Group rebalances seen.
        package var rebalances = 0
        /// Offsets the consumer jumped over between two it handed over (``WorkerStatistics/offsetsSkipped``).
        package var offsetsSkipped = 0

        /// Requests delivered, whatever their disposition.
        package var delivered: Int { deliveries.values.reduce(0, +) }
        /// Dead letters, whatever their reason.
        package var deadLettered: Int { deadLetters.values.reduce(0, +) }
        /// Responses handled, whoever handled them.
        package var handled: Int { actions.values.reduce(0, +) }

        /// Zeroed totals.
        package init() {}

        /// Decodes totals; `actions`, `feedback` and `offsetsSkipped`, which older workers do not publish, may be missing, so `top`
        /// shows every worker of a group while it is upgraded.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            consumed = try container.decode(Int.self, forKey: .consumed)
            deliveries = try container.decode([String: Int].self, forKey: .deliveries)
            deliveryReasons = try container.decode([String: Int].self, forKey: .deliveryReasons)
            deadLetters = try container.decode([String: Int].self, forKey: .deadLetters)
            actions = try container.decodeIfPresent([String: Int].self, forKey: .actions) ?? [:]
            launches = try container.decode([String: Int].self, forKey: .launches)
            feedback = try container.decodeIfPresent([String: Int].self, forKey: .feedback) ?? [:]
            outputs = try container.decode([String: Int].self, forKey: .outputs)
            commits = try container.decode(Int.self, forKey: .commits)
            commitFailures = try container.decode(Int.self, forKey: .commitFailures)
            rebalances = try container.decode(Int.self, forKey: .rebalances)
            offsetsSkipped = try container.decodeIfPresent(Int.self, forKey: .offsetsSkipped) ?? 0
        }
    }

    /// Per-second rates over the interval since the previous snapshot.
    package struct Rates: Sendable, Codable, Equatable {
        /// Records consumed per second.
        package var consumed = 0.0
        /// Requests delivered per second.
        package var delivered = 0.0
        /// Dead letters per second.
        package var deadLettered = 0.0
        /// Responses handled per second.
        package var handled = 0.0

        /// Zero rates.
        package init() {}

        /// Decodes rates; `handled` may be missing (older workers), as in ``Totals``.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            consumed = try container.decode(Double.self, forKey: .consumed)
            delivered = try container.decode(Double.self, forKey: .delivered)
            deadLettered = try container.decode(Double.self, forKey: .deadLettered)
            handled = try container.decodeIfPresent(Double.self, forKey: .handled) ?? 0
        }
    }

    /// End-to-end latency percentiles over the interval, in seconds (nil when nothing finished).
    package struct Latency: Sendable, Codable, Equatable {
        /// Requests finished in the interval.
        package var count = 0
        /// Median.
        package var p50: Double?
        /// 90th percentile.
        package var p90: Double?
        /// 99th percentile.
        package var p99: Double?
        /// 99.9th percentile.
        package var p999: Double?

        /// No observations.
        package init() {}

        /// The percentiles of `histogram`.
        package init(_ histogram: LatencyHistogram) {
            count = histogram.count
            p50 = histogram.percentile(0.5)
            p90 = histogram.percentile(0.9)
            p99 = histogram.percentile(0.99)
            p999 = histogram.percentile(0.999)
        }
    }

    /// One assigned partition and its consumer lag (nil until librdkafka reported it).
    package struct PartitionLag: Sendable, Codable, Equatable {
        /// The topic.
        package var topic: String
        /// The partition number.
        package var partition: Int32
        /// Records behind the high watermark.
        package var lag: Int64?

        /// A partition and its lag.
        package init(topic: String, partition: Int32, lag: Int64?) {
            self.topic = topic
            self.partition = partition
            self.lag = lag
        }
    }

    /// The worker's stable name (`metrics.workerId`, or host name and process id).
    package var workerId: String
    /// The consumer group.
    package var group: String
    /// When the snapshot was taken.
    package var timestamp: Date
    /// Seconds since the previous snapshot (what the rates and percentiles cover).
    package var intervalSeconds: Double
    /// Assigned partitions with their lag.
    package var partitions: [PartitionLag] = []
    /// Counters since start.
    package var totals = Totals()
    /// Rates over the interval.
    package var rates = Rates()
    /// Latency percentiles over the interval.
    package var latency = Latency()
    /// Records in flight now.
    package var inFlight = 0
    /// Age of the oldest record in flight, in seconds (0 when none).
    package var oldestInFlightAgeSeconds = 0.0
    /// Partitions whose intake flow control holds now (every assigned one while it holds).
    package var heldPartitions = 0
    /// How full the partitioned state is (nil without it, or from a worker that publishes none).
    package var state: StateGauges?

    /// Consumer lag summed over the assigned partitions.
    package var lag: Int64 { partitions.reduce(0) { $0 + ($1.lag ?? 0) } }

    /// A snapshot with zeroed measurements.
    package init(workerId: String, group: String, timestamp: Date, intervalSeconds: Double) {
        self.workerId = workerId
        self.group = group
        self.timestamp = timestamp
        self.intervalSeconds = intervalSeconds
    }

    private enum CodingKeys: String, CodingKey {
        case workerId, group, timestamp, intervalSeconds, partitions, totals, rates, latency, inFlight
        case oldestInFlightAgeSeconds, heldPartitions, state
    }

    /// Keys that workers of earlier versions wrote.
    private enum EarlierKeys: String, CodingKey {
        /// `heldPartitions`' earlier name.
        case pausedPartitions
    }

    /// Decodes a snapshot; one from a worker of an earlier version names its held partitions
    /// `pausedPartitions`, so `top` shows every worker of a group while it is upgraded.
    /// (Encoding is the synthesized one.)
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        workerId = try container.decode(String.self, forKey: .workerId)
        group = try container.decode(String.self, forKey: .group)
        timestamp = try container.decode(Date.self, forKey: .timestamp)
        intervalSeconds = try container.decode(Double.self, forKey: .intervalSeconds)
        partitions = try container.decode([PartitionLag].self, forKey: .partitions)
        totals = try container.decode(Totals.self, forKey: .totals)
        rates = try container.decode(Rates.self, forKey: .rates)
        latency = try container.decode(Latency.self, forKey: .latency)
        inFlight = try container.decode(Int.self, forKey: .inFlight)
        oldestInFlightAgeSeconds = try container.decode(Double.self, forKey: .oldestInFlightAgeSeconds)
        heldPartitions =
            try container.decodeIfPresent(Int.self, forKey: .heldPartitions)
            ?? decoder.container(keyedBy: EarlierKeys.self).decode(Int.self, forKey: .pausedPartitions)
        state = try container.decodeIfPresent(StateGauges.self, forKey: .state)
    }
}

extension MetricsSnapshot {
    /// The snapshot as the JSON of a metrics-topic record (ISO 8601 timestamp, sorted keys).
    package func jsonBytes() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(self))
    }

    /// Decodes a metrics-topic record's value.
    /// - Throws: `DecodingError` when the bytes are not a snapshot.
    package init(jsonBytes: some Collection<UInt8>) throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        self = try decoder.decode(MetricsSnapshot.self, from: Data(jsonBytes))
    }
}
