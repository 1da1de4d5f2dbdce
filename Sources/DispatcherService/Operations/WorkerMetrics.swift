public import CoreMetrics
import Dispatcher
import Foundation
import Kafka
import Notifications
import Synchronization

/// The worker's metrics: Prometheus-style counters, gauges and histograms made by an injected
/// `MetricsFactory` (never the global one), plus the tally the metrics topic's snapshots are
/// taken from.
///
/// The worker reports what only it sees (results, admissions, statistics) through small hook
/// calls; its plain counters (``WorkerStatistics``) are copied in by ``update(from:)`` before each
/// scrape and snapshot, so counters exported always equal the worker's own.
public final class WorkerMetrics: Sendable {
    /// Label names, in one place.
    enum Label {
        static let topic = "topic"
        static let partition = "partition"
        static let disposition = "disposition"
        static let reason = "reason"
        static let trigger = "trigger"
        static let handledBy = "handled_by"
        static let `extension` = "extension"
        static let outcome = "outcome"
        static let error = "error"
    }

    /// The metric names.
    public let names: MetricNames
    private let factory: any MetricsFactory
    private let tally = Mutex(MetricsTally())
    /// Labelled counters and timers, made once per label set.
    private let counters = Mutex<[String: Counter]>([:])
    private let timers = Mutex<[String: CoreMetrics.Timer]>([:])
    /// One lag gauge per partition reported by the latest statistics.
    private let lagGauges = Mutex<[TopicPartition: Gauge]>([:])

    private let consumed: Counter
    private let commits: Counter
    private let commitFailures: Counter
    private let rebalances: Counter
    private let latency: CoreMetrics.Timer
    private let inFlight: Gauge
    private let oldestInFlightAge: Gauge
    private let pausedPartitions: Gauge
    private let assignedPartitions: Gauge
    private let offsetRewinds: Counter
    private let overdueRecords: Gauge
    private let stalledPartitions: Gauge

    /// Creates the metrics with `factory` (a `PrometheusMetricsFactory` in the worker; any
    /// factory in tests).
    public init(names: MetricNames, factory: any MetricsFactory) {
        self.names = names
        self.factory = factory
        consumed = Counter(label: names.recordsConsumed, factory: factory)
        commits = Counter(label: names.commits, factory: factory)
        commitFailures = Counter(label: names.commitFailures, factory: factory)
        rebalances = Counter(label: names.rebalances, factory: factory)
        latency = CoreMetrics.Timer(label: names.endToEndLatency, factory: factory)
        inFlight = Gauge(label: names.inFlight, factory: factory)
        oldestInFlightAge = Gauge(label: names.oldestInFlightAge, factory: factory)
        pausedPartitions = Gauge(label: names.pausedPartitions, factory: factory)
        assignedPartitions = Gauge(label: names.assignedPartitions, factory: factory)
        offsetRewinds = Counter(label: names.offsetRewinds, factory: factory)
        overdueRecords = Gauge(label: names.overdueRecords, factory: factory)
        stalledPartitions = Gauge(label: names.stalledPartitions, factory: factory)
        // Exported from the start, at zero, so dashboards and alerts find them before any failure.
        overdueRecords.record(0)
        stalledPartitions.record(0)
    }

    // MARK: Hooks of the worker

    /// Records were taken into flight (not those dropped at admission).
    func admitted(_ messages: [KafkaMessage]) {
        guard !messages.isEmpty else { return }
        let records = messages.map { (TopicPartition(topic: $0.topic, partition: $0.partition), $0.offset) }
        let now = ContinuousClock.now
        tally.withLock { $0.admitted(records, at: now) }
    }

    /// A record left flight (done, or dropped as stale).
    func finished(_ message: KafkaMessage) {
        let partition = TopicPartition(topic: message.topic, partition: message.partition)
        tally.withLock { $0.finished(partition, offset: message.offset) }
    }

    /// Partitions left the worker.
    func forget(_ partitions: [TopicPartition]) {
        tally.withLock { $0.forget(partitions) }
    }

    /// A record's outputs were all acknowledged: counts a request by disposition and reason, a
    /// response by who handled it and why, either's launch by trigger and outputs by topic, and
    /// observes an extension's duration and the end-to-end latency.
    func completed(_ result: DispatchResult, recordTimestamp: Date?, acknowledgedAt: Date = Date()) {
        let latencyValue = recordTimestamp.map { Duration.seconds(acknowledgedAt.timeIntervalSince($0)) }
        tally.withLock { $0.count(result, latency: latencyValue) }
        switch result.decision {
        case .deadLettered(let deadLetter):
            counter(names.deadLetters, [(Label.reason, deadLetter.rejection.reason.rawValue)]).increment()
        case .delivered(let delivery):
            counter(
                names.deliveries,
                [(Label.disposition, delivery.disposition.rawValue), (Label.reason, delivery.reason.rawValue)]
            ).increment()
            if let report = delivery.extensionReport {
                timer(names.extensionDuration, [(Label.extension, report.name), (Label.outcome, report.outcome.rawValue)])
                    .recordNanoseconds(report.elapsed.wholeNanoseconds)
            }
        case .handled(let handled):
            counter(
                names.actions,
                [(Label.handledBy, handled.handling.handledBy.rawValue), (Label.reason, handled.handling.reason.rawValue)]
            ).increment()
        }
        if let launch = result.launchTrigger {
            counter(names.launches, [(Label.trigger, launch.rawValue)]).increment()
        }
        for output in result.outputs {
            counter(names.outputsProduced, [(Label.topic, output.topic)]).increment()
        }
        if let latencyValue { latency.recordNanoseconds(max(latencyValue, .zero).wholeNanoseconds) }
    }

    /// A produce attempt failed (whether it is retried or not).
    func produceFailed(topic: String, error: KafkaError) {
        counter(names.produceFailures, [(Label.topic, topic), (Label.error, error.name)]).increment()
    }

    /// Finds the partitions whose oldest record in flight is older than `stalledAfter` and counts
    /// the records in flight for longer than `overdueAfter`; updates both gauges.
    /// - Returns: the stalled partitions, in order.
    func checkStalls(stalledAfter: Duration, overdueAfter: Duration) -> [TopicPartition] {
        let now = ContinuousClock.now
        let (stalled, overdue) = tally.withLock {
            ($0.partitions(inFlightLongerThan: stalledAfter, at: now), $0.records(inFlightLongerThan: overdueAfter, at: now))
        }
        stalledPartitions.record(stalled.count)
        overdueRecords.record(overdue)
        return stalled
    }

    /// New client statistics: one lag gauge per partition reported, gauges of partitions no
    /// longer reported removed.
    func received(_ statistics: ConsumerStatistics) {
        tally.withLock { $0.lag = statistics.consumerLag }
        lagGauges.withLock { gauges in
            for (partition, lag) in statistics.consumerLag {
                let gauge =
                    gauges[partition]
                    ?? Gauge(
                        label: names.consumerLag,
                        dimensions: [(Label.topic, partition.topic), (Label.partition, String(partition.partition))],
                        factory: factory
                    )
                gauge.record(lag)
                gauges[partition] = gauge
            }
            for (partition, gauge) in gauges where statistics.consumerLag[partition] == nil {
                gauge.destroy()
                gauges[partition] = nil
            }
        }
    }

    // MARK: Reading

    /// Copies the worker's counters and gauges in: counters grow by what changed since the last
    /// update. Call before every scrape and snapshot.
    public func update(from statistics: WorkerStatistics) {
        let now = ContinuousClock.now
        let (growth, age) = tally.withLock { ($0.growth(to: statistics), $0.oldestInFlightAge(at: now)) }
        consumed.increment(by: Int64(growth.consumed))
        commits.increment(by: Int64(growth.commits))
        commitFailures.increment(by: Int64(growth.commitFailures))
        rebalances.increment(by: Int64(growth.rebalances))
        offsetRewinds.increment(by: Int64(growth.offsetRewinds))
        inFlight.record(statistics.inFlight)
        assignedPartitions.record(statistics.assignedPartitions)
        pausedPartitions.record(statistics.isPaused ? statistics.assignedPartitions : 0)
        oldestInFlightAge.record(Double(age.wholeNanoseconds) / 1e9)
    }

    /// A snapshot for the metrics topic; the interval's latency percentiles start over.
    public func snapshot(statistics: WorkerStatistics, workerId: String, group: String) -> MetricsSnapshot {
        let now = ContinuousClock.now
        let date = Date()
        return tally.withLock {
            $0.snapshot(statistics: statistics, workerId: workerId, group: group, date: date, at: now)
        }
    }

    // MARK: Private

    private func counter(_ name: String, _ dimensions: [(String, String)]) -> Counter {
        let key = ([name] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: "|")
        return counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = Counter(label: name, dimensions: dimensions, factory: factory)
            counters[key] = counter
            return counter
        }
    }

    private func timer(_ name: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        let key = ([name] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: "|")
        return timers.withLock { timers in
            if let timer = timers[key] { return timer }
            let timer = CoreMetrics.Timer(label: name, dimensions: dimensions, factory: factory)
            timers[key] = timer
            return timer
        }
    }
}
