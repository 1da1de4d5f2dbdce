public import CoreMetrics
import Dispatcher
import Foundation
import Kafka
import Notifications
import Records
import Synchronization

/// The worker's metrics: Prometheus-style counters, gauges and histograms made by an injected
/// `MetricsFactory` (never the global one), plus the tally the metrics topic's snapshots are
/// taken from.
///
/// The worker counts every outcome once, in its core's tally (``WorkerTally``); ``update(from:)``
/// copies the tally's growth into the Prometheus counters before each scrape and snapshot, so the
/// counters exported always equal the worker's own. The worker reports here only what it does
/// not count: timings (latency, extension durations), lags, stalls and produce failures.
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
        static let table = "table"
        static let found = "found"
        static let configured = "configured"
    }

    /// The metric names.
    package let names: MetricNames
    private let factory: any MetricsFactory
    private let tally = Mutex(MetricsTally())
    /// Labelled counters and timers, made once per label set.
    private let counters = Mutex<[String: Counter]>([:])
    private let timers = Mutex<[String: CoreMetrics.Timer]>([:])
    private let gauges = Mutex<[String: Gauge]>([:])
    /// One lag gauge per partition reported by the latest statistics.
    private let lagGauges = Mutex<[TopicPartition: Gauge]>([:])

    private let latency: CoreMetrics.Timer
    private let inFlight: Gauge
    private let oldestInFlightAge: Gauge
    private let heldPartitions: Gauge
    /// The same figure under its earlier name (``MetricNames/pausedPartitions``).
    private let pausedPartitions: Gauge
    private let assignedPartitions: Gauge
    private let overdueRecords: Gauge
    private let stalledPartitions: Gauge

    /// Creates the metrics with `factory` (a `PrometheusMetricsFactory` in the worker; any
    /// factory in tests).
    public init(names: MetricNames, factory: any MetricsFactory) {
        self.names = names
        self.factory = factory
        latency = CoreMetrics.Timer(label: names.endToEndLatency, factory: factory)
        inFlight = Gauge(label: names.inFlight, factory: factory)
        oldestInFlightAge = Gauge(label: names.oldestInFlightAge, factory: factory)
        heldPartitions = Gauge(label: names.heldPartitions, factory: factory)
        pausedPartitions = Gauge(label: names.pausedPartitions, factory: factory)
        assignedPartitions = Gauge(label: names.assignedPartitions, factory: factory)
        overdueRecords = Gauge(label: names.overdueRecords, factory: factory)
        stalledPartitions = Gauge(label: names.stalledPartitions, factory: factory)
        // Exported from the start, at zero, so dashboards and alerts find them before any failure.
        overdueRecords.record(0)
        stalledPartitions.record(0)
        // The unlabelled counters too, at zero (the labelled ones appear with their first count).
        for series in WorkerTally().counterSeries(names) { _ = counter(series.name, series.dimensions) }
    }

    // MARK: Hooks of the worker

    /// Records' outputs were acknowledged: observes each one's end-to-end latency (from its
    /// record's timestamp) and its extension's duration. Counting them is the worker core's
    /// (``WorkerTally``); these are the timings only it cannot keep.
    func observe(_ published: [WorkerCore.Published], acknowledgedAt: Date = Date()) {
        var latencies: [Duration] = []
        latencies.reserveCapacity(published.count)
        for record in published {
            guard let result = record.result else { continue }
            if result.labels.hasExtensionReport, let report = result.delivery?.extensionReport {
                timer(names.extensionDuration, [(Label.extension, report.name), (Label.outcome, report.outcome.rawValue)])
                    .recordNanoseconds(report.elapsed.wholeNanoseconds)
            }
            if let timestamp = record.item.timestamp {
                latencies.append(.seconds(acknowledgedAt.timeIntervalSince(timestamp)))
            }
        }
        guard !latencies.isEmpty else { return }
        tally.withLock { tally in
            for value in latencies { tally.intervalLatency.record(value) }
        }
        for value in latencies { latency.recordNanoseconds(max(value, .zero).wholeNanoseconds) }
    }

    /// Records decided in place were acknowledged: their end-to-end latencies, from their
    /// timestamps (milliseconds since 1970).
    func observe(timestamps: [Int64], acknowledgedAt: Date = Date()) {
        guard !timestamps.isEmpty else { return }
        // In whole nanoseconds, integers only: a `Duration` made from a `Double` per record was a
        // conversion through 128 bits each time.
        let now = Int64((acknowledgedAt.timeIntervalSince1970 * 1e9).rounded(.down))
        tally.withLock { tally in
            for timestamp in timestamps { tally.intervalLatency.record(seconds: Double(now - timestamp * 1_000_000) * 1e-9) }
        }
        for timestamp in timestamps { latency.recordNanoseconds(max(now - timestamp * 1_000_000, 0)) }
    }

    /// A produce attempt failed (whether it is retried or not).
    func produceFailed(topic: String, error: KafkaError) {
        counter(names.produceFailures, [(Label.topic, topic), (Label.error, error.name)]).increment()
    }

    /// The latest stall check: partitions whose oldest record in flight is older than
    /// `dispatch.stalledPartitionLimit`, and records in flight for longer than the drain limit.
    func stalls(stalledPartitions stalled: Int, overdueRecords overdue: Int) {
        stalledPartitions.record(stalled)
        overdueRecords.record(overdue)
    }

    /// New client statistics: one lag gauge per partition reported, gauges of partitions no
    /// longer reported removed (the lags themselves are kept in the worker's tally).
    func received(_ statistics: ConsumerStatistics) {
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

    /// Copies the worker's counters and gauges in: each counter grows by what its series grew
    /// since the last update. Call before every scrape and snapshot.
    package func update(from statistics: WorkerStatistics) {
        let counted = statistics.tally.counterSeries(names) + (statistics.state?.counterSeries(names) ?? [])
        let growth = tally.withLock { $0.growth(to: counted) }
        for (series, amount) in growth {
            counter(series.name, series.dimensions).increment(by: Int64(amount))
        }
        inFlight.record(statistics.inFlight)
        assignedPartitions.record(statistics.assignedPartitions)
        let held = statistics.isHolding ? statistics.assignedPartitions : 0
        heldPartitions.record(held)
        pausedPartitions.record(held)
        oldestInFlightAge.record(Double(statistics.oldestInFlightAge.wholeNanoseconds) / 1e9)
        if let state = statistics.state { record(state) }
    }

    /// The partitioned state's gauges (its counters grow with the tally's, in ``update(from:)``).
    private func record(_ state: StateGauges) {
        let entries = [("activities", state.activities.entries), ("stored", state.stored.entries), ("badges", state.badges.entries),
                       ("devices", state.devices), ("activity_index", state.activityIndex)]
        for (table, count) in entries { gauge(names.stateEntries, [(Label.table, table)]).record(count) }
        for (table, usage) in [("activities", state.activities), ("stored", state.stored), ("badges", state.badges)] {
            gauge(names.stateLimit, [(Label.table, table)]).record(usage.limit)
        }
        if let partitioner = state.requestsPartitioner {
            gauge(names.statePartitionerMismatch, [(Label.found, partitioner.found), (Label.configured, partitioner.configured)])
                .record(partitioner.isMismatch ? 1 : 0)
        }
    }

    /// A snapshot for the metrics topic; the interval's latency percentiles start over.
    package func snapshot(statistics: WorkerStatistics, workerId: String, group: String) -> MetricsSnapshot {
        let now = ContinuousClock.now
        let date = Date()
        return tally.withLock {
            $0.snapshot(statistics: statistics, workerId: workerId, group: group, date: date, at: now)
        }
    }

    // MARK: Private

    private func counter(_ name: String, _ dimensions: [(String, String)]) -> Counter {
        series(in: counters, name, dimensions) { Counter(label: name, dimensions: dimensions, factory: factory) }
    }

    private func gauge(_ name: String, _ dimensions: [(String, String)]) -> Gauge {
        series(in: gauges, name, dimensions) { Gauge(label: name, dimensions: dimensions, factory: factory) }
    }

    private func timer(_ name: String, _ dimensions: [(String, String)]) -> CoreMetrics.Timer {
        series(in: timers, name, dimensions) { CoreMetrics.Timer(label: name, dimensions: dimensions, factory: factory) }
    }

    /// One series of a metric kind, made once: by its name and its labels in `cache`.
    private func series<Metric: Sendable>(
        in cache: borrowing Mutex<[String: Metric]>, _ name: String, _ dimensions: [(String, String)], make: () -> Metric
    ) -> Metric {
        let key = CounterSeries.key(name, dimensions)
        return cache.withLock { cache in
            if let metric = cache[key] { return metric }
            let metric = make()
            cache[key] = metric
            return metric
        }
    }
}
