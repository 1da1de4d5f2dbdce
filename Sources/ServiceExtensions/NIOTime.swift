import Dispatcher
import NIOCore

extension TimeAmount {
    /// `duration` in NIO's unit: whole nanoseconds, rounded down (saturating).
    init(_ duration: Duration) {
        self = .nanoseconds(duration.wholeNanoseconds)
    }
}

extension NIODeadline {
    /// `instant` as the deadline the webhook client takes (now, when it has passed).
    static func at(_ instant: ContinuousClock.Instant) -> NIODeadline {
        .now() + TimeAmount(max(.zero, instant - .now))
    }
}
