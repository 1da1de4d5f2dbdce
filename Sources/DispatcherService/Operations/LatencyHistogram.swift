import Foundation

/// A histogram of durations in logarithmic buckets (about 6 % wide), cheap to record into and
/// good for percentiles: what the metrics topic's p50 to p99.9 are computed from.
package struct LatencyHistogram: Sendable, Equatable {
    /// The smallest bucket's upper bound, in seconds; shorter durations count in bucket 0.
    static let smallest = 0.000_1
    /// Bucket bounds grow by this factor (40 buckets per decade).
    static let growth = 1.059_253_725_177_289  // 10^(1/40)
    /// Buckets up to about 10,000 s; longer durations count in the last one.
    static let bucketCount = 321

    private var counts = [Int](repeating: 0, count: Self.bucketCount)
    /// Observations recorded.
    package private(set) var count = 0
    /// The longest observation, in seconds.
    package private(set) var maximum = 0.0

    /// An empty histogram.
    package init() {}

    /// Records one observation (negative durations, from clocks apart, count as zero).
    package mutating func record(_ duration: Duration) {
        record(seconds: Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18)
    }

    /// Records one observation of `seconds` (a negative one counts as zero).
    package mutating func record(seconds: Double) {
        let seconds = max(0, seconds)
        counts[Self.bucket(of: seconds)] += 1
        count += 1
        maximum = max(maximum, seconds)
    }

    /// The duration, in seconds, below which the fraction `quantile` (0...1) of the observations
    /// fall: the upper bound of the bucket holding that rank, never above the maximum; nil when empty.
    package func percentile(_ quantile: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((quantile * Double(count)).rounded(.up)))
        var seen = 0
        for (index, bucketCount) in counts.enumerated() {
            seen += bucketCount
            if seen >= rank { return min(Self.upperBound(of: index), maximum) }
        }
        return maximum
    }

    /// The bucket an observation of `seconds` falls in.
    static func bucket(of seconds: Double) -> Int {
        guard seconds > smallest else { return 0 }
        let index = Int((log(seconds / smallest) / log(growth)).rounded(.up))
        return min(max(index, 0), bucketCount - 1)
    }

    /// The upper bound of bucket `index`, in seconds.
    static func upperBound(of index: Int) -> Double {
        smallest * pow(growth, Double(index))
    }
}
