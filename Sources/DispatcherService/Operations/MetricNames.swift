/// The names of the worker's Prometheus metrics, all in one place, each under one prefix
/// (`metrics.prefix`): snake case, with the unit or `_total` in the name.
public struct MetricNames: Sendable, Hashable {
    /// The prefix every name starts with, e.g. `notification_dispatcher`.
    public let prefix: String

    /// Names under `prefix`.
    public init(prefix: String = "notification_dispatcher") {
        self.prefix = prefix
    }

    /// Records consumed (requests and responses).
    package var recordsConsumed: String { "\(prefix)_records_consumed_total" }
    /// Output records acknowledged, by `topic`.
    package var outputsProduced: String { "\(prefix)_outputs_produced_total" }
    /// Requests delivered, by `disposition` and `reason`.
    package var deliveries: String { "\(prefix)_deliveries_total" }
    /// Dead letters acknowledged, by `reason`.
    package var deadLetters: String { "\(prefix)_dead_letters_total" }
    /// Responses handled, by `handled_by` and `reason` (SEMANTICS section 10).
    package var actions: String { "\(prefix)_actions_total" }
    /// Feedback records acknowledged, by token `reason` (SEMANTICS section 12.2); like ``actions``,
    /// a series appears with its first record.
    package var feedbackRecords: String { "\(prefix)_feedback_records_total" }
    /// Launch records acknowledged, by `trigger`.
    package var launches: String { "\(prefix)_launches_total" }
    /// Time a service extension ran, by `extension` and `outcome`.
    package var extensionDuration: String { "\(prefix)_extension_duration_seconds" }
    /// Time from a request record's timestamp until all its outputs were acknowledged.
    package var endToEndLatency: String { "\(prefix)_end_to_end_latency_seconds" }
    /// Records in flight now.
    package var inFlight: String { "\(prefix)_in_flight_records" }
    /// Age of the oldest record in flight.
    package var oldestInFlightAge: String { "\(prefix)_oldest_in_flight_age_seconds" }
    /// Partitions whose intake flow control holds (every assigned one while it holds).
    package var heldPartitions: String { "\(prefix)_held_partitions" }
    /// `heldPartitions`' earlier name, exported beside it with the same value so that
    /// dashboards and alerts keep working through an upgrade; to be removed in a later release.
    package var pausedPartitions: String { "\(prefix)_paused_partitions" }
    /// Partitions assigned to the worker.
    package var assignedPartitions: String { "\(prefix)_assigned_partitions" }
    /// Records behind the high watermark, by `topic` and `partition` (librdkafka statistics).
    package var consumerLag: String { "\(prefix)_consumer_lag_records" }
    /// Successful offset commits.
    package var commits: String { "\(prefix)_commits_total" }
    /// Failed offset commits.
    package var commitFailures: String { "\(prefix)_commit_failures_total" }
    /// Group rebalances seen (assignments, revocations, losses).
    package var rebalances: String { "\(prefix)_rebalances_total" }
    /// Failed produce attempts, by `topic` and librdkafka `error` name (retried or not).
    package var produceFailures: String { "\(prefix)_produce_failures_total" }
    /// Records in flight for longer than the drain limit (deadline plus grace plus margin): the
    /// longest a healthy record takes.
    package var overdueRecords: String { "\(prefix)_overdue_records" }
    /// Partitions whose oldest record in flight is older than `dispatch.stalledPartitionLimit`.
    package var stalledPartitions: String { "\(prefix)_stalled_partitions" }
    /// Offsets handed over below one already received in the same assignment (processed again).
    package var offsetRewinds: String { "\(prefix)_offset_rewinds_total" }
    /// Offsets the consumer jumped over between two it handed over in the same assignment
    /// (compaction, transactions' markers, or records lost on the way).
    package var offsetsSkipped: String { "\(prefix)_offsets_skipped_total" }
    /// Requests started behind running records of their device that only awaited their outputs'
    /// acknowledgements (pipelined), rather than waiting for them.
    package var recordsPipelined: String { "\(prefix)_records_pipelined_total" }

    /// Entries of the partitioned state's tables now, by `table` (`activities`, `stored`,
    /// `devices`, `activity_index`).
    package var stateEntries: String { "\(prefix)_state_entries" }
    /// The most entries a bounded table may have (`dispatch.stateLimits`), by `table`.
    package var stateLimit: String { "\(prefix)_state_limit" }
    /// Requests refused with `ServiceUnavailable` because a table was full, by `table`.
    package var stateRefusals: String { "\(prefix)_state_refusals_total" }
    /// Dismissed activities dropped to make room, by `table`.
    package var stateEvictions: String { "\(prefix)_state_evictions_total" }
    /// Malformed state records and Live Activity commands logged and ignored, by `topic`.
    package var stateRecordsIgnored: String { "\(prefix)_state_records_ignored_total" }
    /// Restored records whose key belongs to another partition under the worker's partitioner
    /// (written with another one), by `table`; counted at every restore that reads them.
    package var stateMisplacedRecords: String { "\(prefix)_state_misplaced_records_total" }
    /// Once a sample of the requests topic's keys settled which partitioner they follow: 1 when
    /// it is not the worker's own, 0 when it is, by `found` (`none`: no one places them all) and
    /// `configured`.
    package var statePartitionerMismatch: String { "\(prefix)_state_partitioner_mismatch" }

    /// Every metric name, for checks of dashboards and alerts against what the worker exports.
    package var all: [String] {
        [
            recordsConsumed, outputsProduced, deliveries, deadLetters, launches, extensionDuration, endToEndLatency,
            inFlight, oldestInFlightAge, heldPartitions, pausedPartitions, assignedPartitions, consumerLag, commits, commitFailures,
            rebalances, produceFailures, overdueRecords, stalledPartitions, offsetRewinds, offsetsSkipped, recordsPipelined, stateEntries, stateLimit,
            stateRefusals, stateEvictions, stateRecordsIgnored, stateMisplacedRecords, statePartitionerMismatch,
        ]
    }
}
