import Synchronization

/// The live ``HealthState`` of one worker, shared by the worker (which reports into it) and the
/// HTTP endpoints (which read it).
public final class WorkerHealth: Sendable {
    private let state: Mutex<HealthState>

    /// A worker's health, starting now, failing liveness after `livenessLimit` without a poll loop run.
    public init(livenessLimit: Duration) {
        state = Mutex(HealthState(livenessLimit: livenessLimit, start: .now))
    }

    /// The state now.
    public var current: HealthState { state.withLock { $0 } }

    /// `/health/live` now.
    public func liveness() -> HealthState.Verdict {
        let now = ContinuousClock.now
        return state.withLock { $0.liveness(at: now) }
    }

    /// `/health/ready` now.
    public func readiness() -> HealthState.Verdict {
        state.withLock { $0.readiness() }
    }

    /// The consumer's event loop ran now.
    func loopRan() {
        let now = ContinuousClock.now
        state.withLock { $0.loopRan(at: now) }
    }

    /// The consumer joined its group.
    func joinedGroup() { state.withLock { $0.joinedGroup() } }
    /// The output producer reached the cluster.
    func producerConnected() { state.withLock { $0.producerConnected() } }
    /// Graceful shutdown began.
    func shutdownBegan() { state.withLock { $0.shutdownBegan() } }
    /// A fatal Kafka error happened.
    func failed(_ description: String) { state.withLock { $0.failed(description) } }
    /// The latest stall check found these partitions stalled.
    func partitionsStalled(_ partitions: [String]) { state.withLock { $0.partitionsStalled(partitions) } }
}
