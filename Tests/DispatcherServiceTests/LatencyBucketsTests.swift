import CoreMetrics
import Prometheus
import Testing

@testable import DispatcherService

/// ``LatencyBuckets`` writes what swift-prometheus's duration histogram writes for the same
/// observations, so that dashboards and alerts on the end-to-end latency see no difference.
@Suite("the end-to-end latency's histogram")
struct LatencyBucketsTests {
    static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2_500),
        .seconds(5), .seconds(10), .seconds(30), .seconds(60),
    ]

    @Test("the same text as swift-prometheus's histogram: every bucket's bound, cumulative counts, +Inf, sum, count")
    func sameTextAsSwiftPrometheus() {
        // What the worker's end-to-end latency was made as: swift-prometheus's factory's timer.
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.buckets
        let reference = factory.makeTimer(label: "t_end_to_end_latency_seconds", dimensions: [])
        let histogram = LatencyBuckets(name: "t_end_to_end_latency_seconds", buckets: Self.buckets)
        // On the bounds, between them, below the first, above the last, zero and negative.
        let nanoseconds: [Int64] = [
            -5, 0, 1, 999_999, 1_000_000, 1_000_001, 7_300_000, 25_000_000, 99_999_999, 1_000_000_000,
            2_500_000_001, 59_999_999_999, 60_000_000_000, 61_000_000_000, 3_600_000_000_000,
        ]
        for value in nanoseconds {
            reference.recordNanoseconds(value)
            histogram.recordNanoseconds(value)
        }
        var expected: [UInt8] = []
        registry.emit(into: &expected)
        var written: [UInt8] = []
        histogram.emit(into: &written)
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        #expect(String(decoding: written, as: UTF8.self).contains("t_end_to_end_latency_seconds_count 15\n"))
    }

    @Test("the export's factory makes timers without dimensions as these, with dimensions as swift-prometheus's, and renders both")
    func exportRendersBoth() {
        let export = PrometheusExport()
        let latency = export.factory.makeTimer(label: "t_latency_seconds", dimensions: [])
        #expect(latency is LatencyBuckets)
        #expect(export.factory.makeTimer(label: "t_latency_seconds", dimensions: []) as? LatencyBuckets === latency as? LatencyBuckets)
        let labelled = export.factory.makeTimer(label: "t_extension_seconds", dimensions: [("extension", "w")])
        #expect(!(labelled is LatencyBuckets))
        latency.recordNanoseconds(2_000_000)
        labelled.recordNanoseconds(3_000_000)
        let text = export.render()
        #expect(text.contains("# TYPE t_latency_seconds histogram\n"))
        #expect(text.contains("t_latency_seconds_bucket{le=\"0.005\"} 1\n"))
        #expect(text.contains("t_latency_seconds_count 1\n"))
        #expect(text.contains("t_extension_seconds_bucket{extension=\"w\",le=\"0.005\"} 1\n"))
        export.factory.destroyTimer(latency)
        #expect(!export.render().contains("t_latency_seconds"))
    }
}
