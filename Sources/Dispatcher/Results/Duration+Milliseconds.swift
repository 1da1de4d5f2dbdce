extension Duration {
    /// Whole milliseconds in this duration (rounded down), for reports and messages.
    var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }
}
