import CoreMetrics
import DispatcherService
import Synchronization

/// The worker's own end-to-end latency (request's producer timestamp to its outputs acknowledged),
/// captured through its metrics: a `MetricsFactory` that keeps every value of the end-to-end
/// latency timer and ignores every other metric.
///
/// The same figure the worker exports to Prometheus, so the benchmark measures what operators see;
/// producer timestamps have millisecond resolution.
final class LatencyRecorder: MetricsFactory, Sendable {
    private let names: MetricNames
    private let values = Mutex<[Int64]>([])
    /// Whether values are kept (false while warming up).
    private let recording = Atomic(false)

    /// Creates a recorder for worker metrics named with `names`.
    init(names: MetricNames = MetricNames()) {
        self.names = names
    }

    /// Worker metrics feeding this recorder.
    func workerMetrics() -> WorkerMetrics {
        WorkerMetrics(names: names, factory: self)
    }

    /// Starts keeping values (after a warm-up).
    func start() { recording.store(true, ordering: .releasing) }

    /// How many values were kept.
    var count: Int { values.withLock { $0.count } }

    /// The values kept, sorted.
    var sorted: [Duration] { values.withLock { $0.sorted().map { .nanoseconds($0) } } }

    fileprivate func record(_ nanoseconds: Int64) {
        guard recording.load(ordering: .acquiring) else { return }
        values.withLock { $0.append(nanoseconds) }
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        label == names.endToEndLatency ? Handler(recorder: self) : NOOPMetricsHandler.instance
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { NOOPMetricsHandler.instance }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        NOOPMetricsHandler.instance
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        NOOPMetricsHandler.instance
    }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}

    /// The end-to-end latency timer's handler.
    private final class Handler: TimerHandler, Sendable {
        let recorder: LatencyRecorder
        init(recorder: LatencyRecorder) { self.recorder = recorder }
        func recordNanoseconds(_ duration: Int64) { recorder.record(duration) }
    }
}
