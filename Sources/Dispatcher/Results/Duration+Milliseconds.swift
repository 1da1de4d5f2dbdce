extension Duration {
    /// Whole milliseconds in this duration (rounded down, saturating), for reports and messages.
    package var wholeMilliseconds: Int64 {
        whole(per: 1_000)
    }

    /// Whole nanoseconds in this duration (rounded down), saturating at `Int64`'s bounds instead
    /// of trapping: timers, NIO and metrics take nanoseconds, and a duration from configuration or
    /// a clock difference must never crash the worker on its way there.
    package var wholeNanoseconds: Int64 {
        whole(per: 1_000_000_000)
    }

    /// Whole `1/unitsPerSecond` units in this duration, saturating.
    private func whole(per unitsPerSecond: Int64) -> Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: unitsPerSecond)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = scaled.addingReportingOverflow(attoseconds / (1_000_000_000_000_000_000 / unitsPerSecond))
        guard !sumOverflow else { return seconds < 0 ? .min : .max }
        return sum
    }
}
