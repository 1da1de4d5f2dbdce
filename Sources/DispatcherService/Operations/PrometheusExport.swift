public import Prometheus

/// A Prometheus registry and the swift-metrics factory that writes to it: made once per worker and
/// injected, so nothing touches the global `MetricsSystem` (tests make as many as they like).
public struct PrometheusExport: Sendable {
    /// The registry `/metrics` renders.
    public let registry: PrometheusCollectorRegistry
    /// The factory ``WorkerMetrics`` makes its metrics with: swift-prometheus's, but for the
    /// timers without dimensions (``LatencyBuckets``).
    public let factory: ExportMetricsFactory

    /// A new, empty registry with histogram buckets fit for the worker's durations.
    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2_500),
            .seconds(5), .seconds(10), .seconds(30), .seconds(60),
        ]
        self.factory = ExportMetricsFactory(prometheus: factory, latencies: LatencyBucketsRegistry())
    }

    /// Appends the metrics in Prometheus text format to `buffer`.
    package func emit(into buffer: inout [UInt8]) {
        registry.emit(into: &buffer)
        factory.latencies.emit(into: &buffer)
    }

    /// The metrics in Prometheus text format.
    package func render() -> String {
        var buffer: [UInt8] = []
        emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}
