import Dispatcher

/// Counters of one worker since it started: what `dev` shows and what metrics are built from.
public struct WorkerStatistics: Sendable, Equatable {
    /// Records consumed, requests and responses (including ones later dropped with their partition).
    public var consumed = 0
    /// Requests whose outputs were all acknowledged, by outcome.
    public var delivered: [String: Int] = [:]
    /// Dead letters acknowledged.
    public var deadLetters = 0
    /// Responses whose outputs were all acknowledged, by who handled them (`handledBy`).
    public var actions: [String: Int] = [:]
    /// Launch records acknowledged.
    public var launches = 0
    /// Records whose result was dropped because their partition left this worker meanwhile.
    public var staleResults = 0
    /// Records in flight now.
    public var inFlight = 0
    /// Whether fetching is paused by flow control now.
    public var isPaused = false
    /// Partitions owned now.
    public var assignedPartitions = 0
    /// Consumer lag summed over owned partitions, from librdkafka's latest statistics.
    public var lag: Int64 = 0
    /// Successful and failed commits.
    public var commits = 0
    public var commitFailures = 0
    /// Group rebalances seen (assignments, revocations, losses).
    public var rebalances = 0
    /// Times the consumer handed over an offset below one already received in the same
    /// assignment (a rewind: an offset reset or a truncated log); processed again, never skipped.
    public var offsetRewinds = 0

    /// Records that ended as a delivery, an action or a dead letter.
    public var accountedFor: Int { delivered.values.reduce(0, +) + actions.values.reduce(0, +) + deadLetters }

    /// Creates zeroed counters.
    public init() {}
}

extension WorkerStatistics {
    /// Counts a record whose outputs were all acknowledged.
    mutating func count(_ result: DispatchResult) {
        switch result.decision {
        case .deadLettered:
            deadLetters += 1
        case .delivered(let delivery):
            delivered[delivery.disposition.rawValue, default: 0] += 1
        case .handled(let handled):
            actions[handled.handling.handledBy.rawValue, default: 0] += 1
        }
        if result.launchTrigger != nil { launches += 1 }
    }
}
