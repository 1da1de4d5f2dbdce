extension Duration {
    /// Whole milliseconds, clamped to librdkafka's `int` time-outs (negative becomes 0).
    var clampedMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        let milliseconds = seconds.multipliedReportingOverflow(by: 1_000)
        guard !milliseconds.overflow else { return seconds < 0 ? 0 : Int32.max }
        let total = milliseconds.partialValue + attoseconds / 1_000_000_000_000_000
        return Int32(clamping: max(0, total))
    }
}
