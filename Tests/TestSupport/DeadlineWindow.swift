/// When a deadline may be seen to fire in a test: not before the deadline, and not later than the
/// deadline plus the expiry grace plus ``slack``, so that a deadline firing seconds late fails.
public struct DeadlineWindow: Sendable, CustomStringConvertible {
    /// Room for a loaded machine (two cores shared by every suite running in parallel): 3 s. A
    /// 300 ms deadline plus grace was seen to end 1.9 s after its start in a full run; a deadline
    /// that fires seconds late still fails.
    public static let slack: Duration = .seconds(3)

    /// The earliest elapsed time allowed: the deadline.
    public let earliest: Duration
    /// The latest elapsed time allowed: deadline, grace and slack.
    public let latest: Duration

    /// The window of a deadline of `deadline` with `grace` to hand over a best attempt.
    public init(deadline: Duration, grace: Duration = .zero) {
        earliest = deadline
        latest = deadline + grace + Self.slack
    }

    /// Whether `elapsed` lies in the window.
    public func contains(_ elapsed: Duration) -> Bool {
        earliest <= elapsed && elapsed <= latest
    }

    public var description: String { "\(earliest) to \(latest)" }
}

/// The result of `body` and the time it took on the continuous clock.
public func timed<Result>(_ body: () async throws -> Result) async rethrows -> (Result, Duration) {
    let clock = ContinuousClock()
    let start = clock.now
    let result = try await body()
    return (result, clock.now - start)
}
