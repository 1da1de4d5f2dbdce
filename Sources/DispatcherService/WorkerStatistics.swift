import Dispatcher
import Kafka
import Notifications
public import Records

/// One worker's counters and gauges at one moment: what `dev` shows, and what Prometheus and the
/// metrics topic export. A reading of the worker's one tally (``WorkerTally``), never a count of
/// its own.
public struct WorkerStatistics: Sendable, Equatable {
    /// The counts since the worker started.
    var tally = WorkerTally()
    /// Records in flight now.
    public internal(set) var inFlight = 0
    /// Whether the intake is held by flow control now.
    public internal(set) var isHolding = false
    /// Partitions owned now.
    public internal(set) var assignedPartitions = 0
    /// How long the oldest record in flight has been in flight (zero when none).
    public internal(set) var oldestInFlightAge: Duration = .zero
    /// How full the partitioned state is; nil without it.
    package internal(set) var state: StateGauges?

    /// Creates zeroed counters.
    package init() {}

    /// Records consumed, requests and responses (including ones later dropped with their partition).
    public internal(set) var consumed: Int {
        get { tally.consumed }
        set { tally.consumed = newValue }
    }
    /// Requests whose outputs were all acknowledged, by disposition.
    public var delivered: [String: Int] { totals.deliveries }
    /// Dead letters acknowledged.
    public var deadLetters: Int { tally.deadLetters.values.reduce(0, +) }
    /// Responses whose outputs were all acknowledged, by who handled them (`handledBy`).
    public var actions: [String: Int] {
        tally.actions.reduce(into: [:]) { $0[$1.key.handledBy.rawValue, default: 0] += $1.value }
    }
    /// Launch records acknowledged.
    public var launches: Int { tally.launches.values.reduce(0, +) }
    /// Records whose result was dropped because their partition left this worker meanwhile.
    public var staleResults: Int { tally.staleResults }
    /// Consumer lag summed over owned partitions, from librdkafka's latest statistics.
    public var lag: Int64 { tally.lag.values.reduce(0) { $0 + max($1, 0) } }
    /// Consumer lag per owned partition, from librdkafka's latest statistics.
    public var partitionLag: [TopicPartition: Int64] { tally.lag }
    /// Successful and failed commits.
    public internal(set) var commits: Int {
        get { tally.commits }
        set { tally.commits = newValue }
    }
    public internal(set) var commitFailures: Int {
        get { tally.commitFailures }
        set { tally.commitFailures = newValue }
    }
    /// Group rebalances seen (assignments, revocations, losses).
    public internal(set) var rebalances: Int {
        get { tally.rebalances }
        set { tally.rebalances = newValue }
    }
    /// Times the consumer handed over an offset below one already received in the same
    /// assignment (a rewind: an offset reset or a truncated log); processed again, never skipped.
    public var offsetRewinds: Int { tally.offsetRewinds }
    /// Offsets the consumer jumped over between two it handed over in the same assignment: a
    /// compacted topic's removed records, transactions' markers, or records lost on the way.
    public var offsetsSkipped: Int { tally.offsetsSkipped }
    /// Requests started behind running requests of their device that only awaited their
    /// outputs' acknowledgements (pipelined: docs/worker.md, "Ordering").
    public var pipelined: Int { tally.pipelined }

    /// Records that ended as a delivery, an action or a dead letter.
    public var accountedFor: Int { tally.accountedFor }
    /// Records done (every output acknowledged), by the topic they were consumed from.
    public var finished: [String: Int] { tally.finished }
    /// Output records acknowledged, by topic.
    public var outputs: [String: Int] { tally.outputs }

    /// The totals by label, as the metrics topic publishes them.
    package var totals: MetricsSnapshot.Totals { tally.totals }
}
