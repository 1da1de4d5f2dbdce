import DispatcherService
import Testing

@Suite("Latency histogram percentiles")
struct LatencyHistogramTests {
    @Test("empty: no percentiles")
    func empty() {
        #expect(LatencyHistogram().percentile(0.5) == nil)
    }

    @Test(
        "percentiles of 1 ms ... 1,000 ms are within one bucket (6 %) above the exact value",
        arguments: [(0.5, 0.500), (0.9, 0.900), (0.99, 0.990), (0.999, 0.999)]
    )
    func uniform(quantile: Double, exact: Double) throws {
        var histogram = LatencyHistogram()
        for milliseconds in 1...1_000 { histogram.record(.milliseconds(milliseconds)) }
        #expect(histogram.count == 1_000)
        let value = try #require(histogram.percentile(quantile))
        #expect(value >= exact && value <= exact * 1.06, "p\(quantile * 100) = \(value), exact \(exact)")
    }

    @Test("never above the largest observation; negative durations count as zero")
    func bounds() {
        var histogram = LatencyHistogram()
        histogram.record(.milliseconds(7))
        histogram.record(.seconds(-3))
        #expect(histogram.percentile(1) == 0.007)
        #expect(histogram.percentile(0.5)! <= 0.000_1)
        #expect(histogram.maximum == 0.007)
    }
}
