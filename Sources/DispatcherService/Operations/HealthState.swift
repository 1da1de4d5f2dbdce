/// What the health endpoints answer, as a pure value: the worker reports events into it and the
/// endpoints ask it, passing the time, so it is tested with made-up instants.
public struct HealthState: Sendable, Equatable {
    /// One endpoint's answer.
    public struct Verdict: Sendable, Equatable {
        /// Whether the check passes (HTTP 200) or fails (HTTP 503).
        public var isHealthy: Bool
        /// Why, for people (the response body).
        public var reason: String

        /// A verdict and its reason.
        package init(isHealthy: Bool, reason: String) {
            self.isHealthy = isHealthy
            self.reason = reason
        }
    }

    /// How long the poll loop may not run before the worker counts as dead (`http.livenessLimit`).
    public var livenessLimit: Duration
    /// When the consumer's event loop last ran (or when the worker was created).
    public private(set) var lastLoop: ContinuousClock.Instant
    /// Whether the consumer joined its group (a first assignment arrived).
    public private(set) var hasJoinedGroup = false
    /// Whether the output producer reached the cluster.
    public private(set) var isProducerConnected = false
    /// Whether graceful shutdown has begun.
    public private(set) var isShuttingDown = false
    /// A fatal Kafka error, when one happened: the worker cannot recover.
    public private(set) var fatalError: String?
    /// Partitions with records in flight whose commit has not moved for longer than
    /// `dispatch.stalledPartitionLimit` (`topic[partition]`), from the latest check.
    public private(set) var stalledPartitions: [String] = []

    /// A worker created at `start`, not yet ready.
    package init(livenessLimit: Duration, start: ContinuousClock.Instant) {
        self.livenessLimit = livenessLimit
        self.lastLoop = start
    }

    /// The poll loop ran at `now`.
    package mutating func loopRan(at now: ContinuousClock.Instant) {
        lastLoop = max(lastLoop, now)
    }

    /// The consumer joined its group.
    package mutating func joinedGroup() { hasJoinedGroup = true }

    /// The output producer reached the cluster.
    package mutating func producerConnected() { isProducerConnected = true }

    /// Graceful shutdown began.
    package mutating func shutdownBegan() { isShuttingDown = true }

    /// A fatal Kafka error happened.
    package mutating func failed(_ description: String) { fatalError = fatalError ?? description }

    /// The latest stall check found these partitions stalled (none: the stall is over).
    package mutating func partitionsStalled(_ partitions: [String]) { stalledPartitions = partitions }

    /// `/health/live`: fails after a fatal error or when the poll loop has not run for longer than the limit.
    public func liveness(at now: ContinuousClock.Instant) -> Verdict {
        if let fatalError { return Verdict(isHealthy: false, reason: "stopped by a fatal error: \(fatalError)") }
        let silent = now - lastLoop
        guard silent <= livenessLimit else {
            return Verdict(isHealthy: false, reason: "poll loop has not run for \(silent) (limit \(livenessLimit))")
        }
        return Verdict(isHealthy: true, reason: "live")
    }

    /// `/health/ready`: passes once the group is joined and the producer connected, until shutdown;
    /// fails while a partition is stalled.
    public func readiness() -> Verdict {
        if isShuttingDown { return Verdict(isHealthy: false, reason: "shutting down") }
        if let fatalError { return Verdict(isHealthy: false, reason: "stopped by a fatal error: \(fatalError)") }
        if !stalledPartitions.isEmpty {
            return Verdict(
                isHealthy: false,
                reason: "partitions stalled (records in flight, no commit for longer than the limit): "
                    + stalledPartitions.joined(separator: ","))
        }
        if !hasJoinedGroup { return Verdict(isHealthy: false, reason: "not yet joined the consumer group") }
        if !isProducerConnected { return Verdict(isHealthy: false, reason: "producer not yet connected") }
        return Verdict(isHealthy: true, reason: "ready")
    }
}
