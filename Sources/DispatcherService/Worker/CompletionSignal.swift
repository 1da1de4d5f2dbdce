import Synchronization

/// Wakes tasks that wait for "something finished", without polling and without lost wake-ups.
///
/// A waiter reads ``generation``, checks its condition, and only then waits for a generation after
/// the one it read: a notification between the check and the wait is never missed.
final class CompletionSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiterID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// The number of notifications so far.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Wakes every waiter.
    func notify() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation &+= 1
            defer { state.waiters.removeAll(keepingCapacity: true) }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
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
