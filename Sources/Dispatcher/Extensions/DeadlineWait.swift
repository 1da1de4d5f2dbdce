import Synchronization

/// Waits for an operation until a deadline without waiting for the operation itself afterwards.
///
/// A service extension is user code: one that ignores cancellation must not hold a dispatch (and
/// with it a Kafka offset) past its deadline. So the operation runs in its own task, which is
/// cancelled when the deadline passes and then left to finish on its own.
enum DeadlineWait {
    /// The operation's result, or nil when `deadline` passed first (or the caller was cancelled).
    static func value<Value: Sendable>(
        until deadline: ContinuousClock.Instant,
        _ operation: @escaping @Sendable () async -> Value
    ) async -> Value? {
        let slot = ResultSlot<Value>()
        // Unstructured on purpose (see the type's comment): cancelled below, never awaited.
        let work = Task { slot.fill(await operation()) }
        let timer = expire(slot, at: deadline)
        let value = await withTaskCancellationHandler {
            await slot.value()
        } onCancel: {
            slot.fill(nil)
        }
        timer.cancel()
        work.cancel()
        return value
    }

    /// Fills `slot` with nil at `deadline` unless cancelled first (``OneShotTimer``; it holds the
    /// slot only weakly).
    ///
    /// When it fires, the expiry itself is a job on the concurrency pool, queued behind the
    /// operation's own jobs: an operation that finished in time but whose last step still waits
    /// for a thread of a busy pool is not counted as late.
    private static func expire<Value: Sendable>(_ slot: ResultSlot<Value>, at deadline: ContinuousClock.Instant) -> OneShotTimer {
        OneShotTimer(at: deadline) { [weak slot] in
            guard let slot else { return }
            Task { slot.fill(nil) }
        }
    }
}

/// A one-time slot: the first `fill` wins and wakes the one waiter.
private final class ResultSlot<Value: Sendable>: Sendable {
    /// Nothing yet (maybe a waiter), a value, or handed to the waiter.
    private enum State {
        /// No value yet; the waiter, once it waits.
        case empty(CheckedContinuation<Value?, Never>?)
        /// A value that no one waits for yet.
        case filled(Value?)
        /// The value went to the waiter.
        case taken
    }

    private let state = Mutex<State>(.empty(nil))

    /// Stores `value` unless the slot was filled before; wakes the waiter.
    func fill(_ value: Value?) {
        let waiter: CheckedContinuation<Value?, Never>? = state.withLock { state in
            guard case .empty(let waiter) = state else { return nil }
            state = waiter == nil ? .filled(value) : .taken
            return waiter
        }
        waiter?.resume(returning: value)
    }

    /// Waits for the first value (must be called once).
    func value() async -> Value? {
        await withCheckedContinuation { continuation in
            let ready: Value?? = state.withLock { state in
                switch state {
                case .empty:
                    state = .empty(continuation)
                    return .none
                case .filled(let value):
                    state = .taken
                    return .some(value)
                case .taken:
                    return .some(nil)
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
