import Dispatch
import Synchronization

/// Wakes tasks that wait for "something finished", without polling and without lost wake-ups.
///
/// A waiter reads ``generation``, checks its condition, and only then waits for a generation after
/// the one it read: a notification between the check and the wait is never missed. A thread
/// outside the cooperative pool may wait too, blocking (``blockingWait(after:until:)``).
final class CompletionSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiterID: UInt64 = 0
        /// Threads blocked in ``blockingWait(after:until:)``, by waiter.
        var blocked: [UInt64: DispatchSemaphore] = [:]
    }

    private let state = Mutex(State())

    /// The number of notifications so far.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Wakes every waiter.
    func notify() {
        let (waiters, blocked) = state.withLock { state -> ([CheckedContinuation<Void, Never>], [DispatchSemaphore]) in
            state.generation &+= 1
            defer { state.waiters.removeAll(keepingCapacity: true) }
            guard !state.blocked.isEmpty else { return (Array(state.waiters.values), []) }
            defer { state.blocked.removeAll() }
            return (Array(state.waiters.values), Array(state.blocked.values))
        }
        for waiter in waiters { waiter.resume() }
        for thread in blocked { thread.signal() }
    }

    /// Blocks the calling thread until a notification after `generation`, or `deadline`.
    ///
    /// - Important: for threads of their own (the consumer's poll thread), never for a thread of
    ///   Swift's cooperative pool, which must not block.
    /// - Returns: whether a notification came before `deadline`.
    func blockingWait(after generation: UInt64, until deadline: ContinuousClock.Instant) -> Bool {
        let semaphore = DispatchSemaphore(value: 0)
        let waiterID = state.withLock { state -> UInt64? in
            guard state.generation == generation else { return nil }
            state.nextWaiterID &+= 1
            state.blocked[state.nextWaiterID] = semaphore
            return state.nextWaiterID
        }
        guard let waiterID else { return true }
        let left = max(deadline - ContinuousClock.now, .zero)
        let nanoseconds = left.components.seconds * 1_000_000_000 + left.components.attoseconds / 1_000_000_000
        if semaphore.wait(timeout: .now() + .nanoseconds(Int(clamping: nanoseconds))) == .success { return true }
        // Timed out, unless a notification took the waiter meanwhile (it then signalled).
        return state.withLock { $0.blocked.removeValue(forKey: waiterID) } == nil
    }

    /// Returns once a notification after `generation` happened, or when the task is cancelled.
    func wait(after generation: UInt64) async {
        let waiterID = state.withLock { state -> UInt64 in
            state.nextWaiterID &+= 1
            return state.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiters[waiterID] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: waiterID) }
            waiter?.resume()
        }
    }
}
