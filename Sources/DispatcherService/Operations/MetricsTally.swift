import Dispatcher
import Foundation
import Kafka
import Notifications

/// What the worker's metrics remember between observations, as one value: totals by label, the
/// latency of the current interval, the records in flight and the latest lags.
///
/// Pure: every method takes the time it needs, so it is tested with made-up instants.
struct MetricsTally: Sendable {
    /// Totals by label since start (the parts of a snapshot's totals the worker's counters lack).
    var totals = MetricsSnapshot.Totals()
    /// End-to-end latency of the requests finished since the last snapshot.
    var intervalLatency = LatencyHistogram()
    /// When each record in flight was taken in, by partition and offset.
    var admissions: [TopicPartition: [Int64: ContinuousClock.Instant]] = [:]
    /// The latest consumer lag per partition (librdkafka statistics).
    var lag: [TopicPartition: Int64] = [:]
    /// The totals and time of the previous snapshot, for rates.
    var previous: (totals: MetricsSnapshot.Totals, at: ContinuousClock.Instant)?
    /// The highest worker counters copied into the Prometheus counters so far.
    var synced = WorkerStatistics()

    /// How much each worker counter grew since the last copy. Counters only grow, so an older
    /// reading arriving after a newer one (two scrapes at once) adds nothing and is not undone.
    mutating func growth(
        to statistics: WorkerStatistics
    ) -> (consumed: Int, commits: Int, commitFailures: Int, rebalances: Int, offsetRewinds: Int) {
        let growth = (
            consumed: max(0, statistics.consumed - synced.consumed),
            commits: max(0, statistics.commits - synced.commits),
            commitFailures: max(0, statistics.commitFailures - synced.commitFailures),
            rebalances: max(0, statistics.rebalances - synced.rebalances),
            offsetRewinds: max(0, statistics.offsetRewinds - synced.offsetRewinds)
        )
        synced.consumed += growth.consumed
        synced.commits += growth.commits
        synced.commitFailures += growth.commitFailures
        synced.rebalances += growth.rebalances
        synced.offsetRewinds += growth.offsetRewinds
        return growth
    }

    /// Counts a record whose outputs were all acknowledged.
    mutating func count(_ result: DispatchResult, latency: Duration?) {
        switch result.decision {
        case .deadLettered(let deadLetter):
            totals.deadLetters[deadLetter.rejection.reason.rawValue, default: 0] += 1
        case .delivered(let delivery):
            totals.deliveries[delivery.disposition.rawValue, default: 0] += 1
            totals.deliveryReasons["\(delivery.disposition.rawValue)/\(delivery.reason.rawValue)", default: 0] += 1
        case .handled(let handled):
            totals.actions["\(handled.handling.handledBy.rawValue)/\(handled.handling.reason.rawValue)", default: 0] += 1
        }
        if let launch = result.launchTrigger { totals.launches[launch.rawValue, default: 0] += 1 }
        for output in result.outputs { totals.outputs[output.topic, default: 0] += 1 }
        if let latency { intervalLatency.record(latency) }
    }

    /// Records taken into flight at `now`.
    mutating func admitted(_ records: [(TopicPartition, Int64)], at now: ContinuousClock.Instant) {
        for (partition, offset) in records { admissions[partition, default: [:]][offset] = now }
    }

    /// A record left flight.
    mutating func finished(_ partition: TopicPartition, offset: Int64) {
        admissions[partition]?[offset] = nil
    }

    /// Partitions left the worker: their records no longer count as in flight.
    mutating func forget(_ partitions: [TopicPartition]) {
        for partition in partitions { admissions[partition] = nil }
    }

    /// How long the oldest record in flight has been in flight (zero when none).
    func oldestInFlightAge(at now: ContinuousClock.Instant) -> Duration {
        let oldest = admissions.values.lazy.compactMap { $0.values.min() }.min()
        return oldest.map { now - $0 } ?? .zero
    }

    /// The partitions whose oldest record in flight was taken in more than `limit` before `now`:
    /// their commit cannot have moved for that long. In topic and partition order.
    func partitions(inFlightLongerThan limit: Duration, at now: ContinuousClock.Instant) -> [TopicPartition] {
        admissions.compactMap { partition, records in
            guard let oldest = records.values.min(), now - oldest > limit else { return nil }
            return partition
        }.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
    }

    /// The records in flight for more than `limit` before `now`.
    func records(inFlightLongerThan limit: Duration, at now: ContinuousClock.Instant) -> Int {
        admissions.values.reduce(0) { count, records in count + records.values.count { now - $0 > limit } }
    }

    /// Takes a snapshot: totals merged with the worker's counters, rates since the previous
    /// snapshot, the interval's latency percentiles (then reset).
    mutating func snapshot(
        statistics: WorkerStatistics, workerId: String, group: String, date: Date, at now: ContinuousClock.Instant
    ) -> MetricsSnapshot {
        var current = totals
        current.consumed = statistics.consumed
        current.commits = statistics.commits
        current.commitFailures = statistics.commitFailures
        current.rebalances = statistics.rebalances
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
        snapshot.partitions = lag.keys.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }.map {
            MetricsSnapshot.PartitionLag(topic: $0.topic, partition: $0.partition, lag: lag[$0])
        }
        snapshot.inFlight = statistics.inFlight
        let age = oldestInFlightAge(at: now)
        snapshot.oldestInFlightAgeSeconds = Double(age.components.seconds) + Double(age.components.attoseconds) * 1e-18
        snapshot.pausedPartitions = statistics.isPaused ? statistics.assignedPartitions : 0
        intervalLatency = LatencyHistogram()
        previous = (current, now)
        return snapshot
    }
}
