import Dispatcher
import Foundation
import Kafka
import Notifications
import Records

/// What the worker's metrics remember between readings: the counter values copied into
/// Prometheus so far, the latency of the current interval and the previous snapshot. The counts
/// and the lags themselves live in the worker's one tally (``WorkerTally``).
///
/// Pure: every method takes the time it needs, so it is tested with made-up instants.
struct MetricsTally: Sendable {
    /// End-to-end latency of the records finished since the last snapshot.
    var intervalLatency = LatencyHistogram()
    /// The totals and time of the previous snapshot, for rates.
    var previous: (totals: MetricsSnapshot.Totals, at: ContinuousClock.Instant)?
    /// The highest value of each counter series copied into Prometheus so far, by series key.
    var synced: [String: Int] = [:]

    /// How much each counter series grew since the last copy. Counters only grow, so an older
    /// reading arriving after a newer one (two scrapes at once) adds nothing and is not undone.
    mutating func growth(to series: [CounterSeries]) -> [(series: CounterSeries, growth: Int)] {
        series.compactMap { series in
            let growth = series.value - synced[series.key, default: 0]
            guard growth > 0 else { return nil }
            synced[series.key] = series.value
            return (series, growth)
        }
    }

    /// Takes a snapshot: the worker's totals, rates since the previous snapshot, the interval's
    /// latency percentiles (then reset).
    mutating func snapshot(
        statistics: WorkerStatistics, workerId: String, group: String, date: Date, at now: ContinuousClock.Instant
    ) -> MetricsSnapshot {
        let current = statistics.totals
        let elapsed = previous.map { now - $0.at }
        let seconds = elapsed.map { Double($0.components.seconds) + Double($0.components.attoseconds) * 1e-18 } ?? 0
        var snapshot = MetricsSnapshot(workerId: workerId, group: group, timestamp: date, intervalSeconds: seconds)
        snapshot.totals = current
        if let previous, seconds > 0 {
            snapshot.rates.consumed = Double(current.consumed - previous.totals.consumed) / seconds
            snapshot.rates.delivered = Double(current.delivered - previous.totals.delivered) / seconds
            snapshot.rates.deadLettered = Double(current.deadLettered - previous.totals.deadLettered) / seconds
            snapshot.rates.handled = Double(current.handled - previous.totals.handled) / seconds
        }
        snapshot.latency = MetricsSnapshot.Latency(intervalLatency)
        let lag = statistics.partitionLag
        snapshot.partitions = lag.keys.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }.map {
            MetricsSnapshot.PartitionLag(topic: $0.topic, partition: $0.partition, lag: lag[$0])
        }
        snapshot.inFlight = statistics.inFlight
        let age = statistics.oldestInFlightAge
        snapshot.oldestInFlightAgeSeconds = Double(age.components.seconds) + Double(age.components.attoseconds) * 1e-18
        snapshot.heldPartitions = statistics.isHolding ? statistics.assignedPartitions : 0
        snapshot.state = statistics.state
        intervalLatency = LatencyHistogram()
        previous = (current, now)
        return snapshot
    }
}

/// One Prometheus counter series of the worker's tally: its name, its labels and its value.
struct CounterSeries: Sendable {
    var name: String
    var dimensions: [(String, String)]
    var value: Int

    init(name: String, labels dimensions: (String, String)..., value: Int) {
        self.name = name
        self.dimensions = dimensions
        self.value = value
    }

    /// The series' identity: name and labels.
    var key: String { Self.key(name, dimensions) }

    /// The identity of the series `name` with `dimensions`: also the key of the metrics' caches.
    static func key(_ name: String, _ dimensions: [(String, String)]) -> String {
        ([name] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: "|")
    }
}

extension StateGauges {
    /// The partitioned state's totals as Prometheus counter series, named by `names`: they grow
    /// into counters the way the tally's do (``MetricsTally/growth(to:)``).
    func counterSeries(_ names: MetricNames) -> [CounterSeries] {
        typealias Label = WorkerMetrics.Label
        var series = [
            CounterSeries(name: names.stateRefusals, labels: (Label.table, "activities"), value: activities.refused),
            CounterSeries(name: names.stateRefusals, labels: (Label.table, "stored"), value: stored.refused),
            CounterSeries(name: names.stateRefusals, labels: (Label.table, "badges"), value: badges.refused),
            CounterSeries(name: names.stateEvictions, labels: (Label.table, "activities"), value: activities.evicted),
        ]
        series += recordsIgnored.map { CounterSeries(name: names.stateRecordsIgnored, labels: (Label.topic, $0), value: $1) }
        series += misplacedRecords.map { CounterSeries(name: names.stateMisplacedRecords, labels: (Label.table, $0), value: $1) }
        return series
    }
}

extension WorkerTally {
    /// Every counter as Prometheus series, named by `names`.
    func counterSeries(_ names: MetricNames) -> [CounterSeries] {
        typealias Label = WorkerMetrics.Label
        var series = [
            CounterSeries(name: names.recordsConsumed, value: consumed),
            CounterSeries(name: names.commits, value: commits),
            CounterSeries(name: names.commitFailures, value: commitFailures),
            CounterSeries(name: names.rebalances, value: rebalances),
            CounterSeries(name: names.offsetRewinds, value: offsetRewinds),
            CounterSeries(name: names.offsetsSkipped, value: offsetsSkipped),
            CounterSeries(name: names.recordsPipelined, value: pipelined),
        ]
        series += deliveries.map { label, count in
            CounterSeries(name: names.deliveries, labels: (Label.disposition, label.disposition.rawValue), (Label.reason, label.reason.rawValue), value: count)
        }
        series += actions.map { label, count in
            CounterSeries(name: names.actions, labels: (Label.handledBy, label.handledBy.rawValue), (Label.reason, label.reason.rawValue), value: count)
        }
        series += deadLetters.map { CounterSeries(name: names.deadLetters, labels: (Label.reason, $0.rawValue), value: $1) }
        series += launches.map { CounterSeries(name: names.launches, labels: (Label.trigger, $0.rawValue), value: $1) }
        series += feedback.map { CounterSeries(name: names.feedbackRecords, labels: (Label.reason, $0.rawValue), value: $1) }
        series += outputs.map { CounterSeries(name: names.outputsProduced, labels: (Label.topic, $0), value: $1) }
        return series
    }
}
