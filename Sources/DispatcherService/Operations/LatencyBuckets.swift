public import CoreMetrics
import Prometheus
import Synchronization

/// A Prometheus histogram of durations without labels, for the timing the worker observes once
/// per record (the end-to-end latency): the same buckets and the same text as swift-prometheus's
/// histogram, recorded more cheaply. swift-prometheus's takes a pthread lock and compares the
/// observation, a 128-bit `Duration`, with each of its buckets: about 450 instructions a record
/// under callgrind, a tenth of what the worker itself does for a gate-only record. Here a record
/// is a search over 64-bit bounds under Synchronization's lock, and its bucket alone is counted
/// (the emitted counts are cumulative, summed when rendered).
final class LatencyBuckets: TimerHandler, Sendable {
    /// The metric's name.
    let name: String
    /// The buckets' upper bounds in nanoseconds, ascending.
    private let bounds: [Int64]
    /// Each bound as swift-prometheus writes it in `le` (`Duration.bucketRepresentation`).
    private let boundTexts: [String]

    private struct State {
        /// Observations per bucket, not cumulative; the last counts those above every bound.
        var counts: [Int]
        var sumNanoseconds: Int64 = 0
        var count = 0
    }

    private let state: Mutex<State>

    /// An empty histogram named `name` with `buckets` (sorted here).
    init(name: String, buckets: [Duration]) {
        self.name = name
        let sorted = buckets.sorted()
        bounds = sorted.map { Self.nanoseconds($0) }
        boundTexts = sorted.map(\.bucketRepresentation)
        state = Mutex(State(counts: [Int](repeating: 0, count: sorted.count + 1)))
    }

    /// Records one observation (negative ones count in the first bucket, as swift-prometheus's do).
    func recordNanoseconds(_ duration: Int64) {
        let bucket = self.bucket(of: duration)
        state.withLock { state in
            state.counts[bucket] += 1
            state.sumNanoseconds &+= duration
            state.count += 1
        }
    }

    /// The first bucket whose bound is at least `nanoseconds` (Prometheus's `le`), or the last.
    private func bucket(of nanoseconds: Int64) -> Int {
        var low = 0
        var high = bounds.count
        while low < high {
            let middle = (low + high) / 2
            if bounds[middle] >= nanoseconds { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// Appends the histogram in Prometheus's text format, as swift-prometheus's registry writes a
    /// duration histogram without labels.
    func emit(into buffer: inout [UInt8]) {
        let snapshot = state.withLock { $0 }
        buffer.append(contentsOf: "# TYPE \(name) histogram\n".utf8)
        var cumulative = 0
        for (index, text) in boundTexts.enumerated() {
            cumulative += snapshot.counts[index]
            buffer.append(contentsOf: "\(name)_bucket{le=\"\(text)\"} \(cumulative)\n".utf8)
        }
        buffer.append(contentsOf: "\(name)_bucket{le=\"+Inf\"} \(snapshot.count)\n".utf8)
        buffer.append(contentsOf: "\(name)_sum \(Duration.nanoseconds(snapshot.sumNanoseconds).bucketRepresentation)\n".utf8)
        buffer.append(contentsOf: "\(name)_count \(snapshot.count)\n".utf8)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// The worker's metrics factory: swift-prometheus's, except that a timer without dimensions is a
/// ``LatencyBuckets`` (the end-to-end latency, observed per record), rendered by
/// ``PrometheusExport`` beside the registry's metrics.
public struct ExportMetricsFactory: MetricsFactory {
    let prometheus: PrometheusMetricsFactory
    let latencies: LatencyBucketsRegistry

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        prometheus.makeCounter(label: label, dimensions: dimensions)
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        prometheus.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        prometheus.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        prometheus.makeMeter(label: label, dimensions: dimensions)
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        guard dimensions.isEmpty else { return prometheus.makeTimer(label: label, dimensions: dimensions) }
        return latencies.histogram(named: label, buckets: prometheus.defaultDurationHistogramBuckets)
    }

    public func destroyCounter(_ handler: any CounterHandler) { prometheus.destroyCounter(handler) }
    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { prometheus.destroyFloatingPointCounter(handler) }
    public func destroyRecorder(_ handler: any RecorderHandler) { prometheus.destroyRecorder(handler) }
    public func destroyMeter(_ handler: any MeterHandler) { prometheus.destroyMeter(handler) }

    public func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? LatencyBuckets { latencies.remove(histogram) } else { prometheus.destroyTimer(handler) }
    }
}

/// The ``LatencyBuckets`` an ``ExportMetricsFactory`` made, one per name, in the order made.
final class LatencyBucketsRegistry: Sendable {
    private let histograms = Mutex<[LatencyBuckets]>([])

    /// The histogram named `name`, made with `buckets` the first time.
    func histogram(named name: String, buckets: [Duration]) -> LatencyBuckets {
        histograms.withLock { histograms in
            if let made = histograms.first(where: { $0.name == name }) { return made }
            let made = LatencyBuckets(name: name, buckets: buckets)
            histograms.append(made)
            return made
        }
    }

    func remove(_ histogram: LatencyBuckets) {
        histograms.withLock { $0.removeAll { $0 === histogram } }
    }

    func emit(into buffer: inout [UInt8]) {
        for histogram in histograms.withLock({ $0 }) { histogram.emit(into: &buffer) }
    }
}
