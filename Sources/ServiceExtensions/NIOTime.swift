import NIOCore

extension TimeAmount {
    /// `duration` in NIO's unit: whole nanoseconds, rounded down.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

extension NIODeadline {
    /// `instant` as the deadline AsyncHTTPClient takes (now, when it has passed).
    static func at(_ instant: ContinuousClock.Instant) -> NIODeadline {
        .now() + TimeAmount(max(.zero, instant - .now))
    }
}
