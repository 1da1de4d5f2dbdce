import Synchronization

/// The first failure that stops the worker for good (a fatal Kafka error, a dead letter that
/// cannot be written), and a signal for whoever must act on it.
///
/// Made before the worker's Kafka clients, so their callbacks can report into it from
/// librdkafka's threads.
final class WorkerFailure: Sendable {
    private let first = Mutex<(any Error)?>(nil)
    /// Notified when the first failure is recorded.
    let signal = CompletionSignal()

    /// The failure, once one happened.
    var error: (any Error)? { first.withLock { $0 } }

    /// Records `error` unless a failure was recorded before, and wakes the signal's waiters.
    func record(_ error: any Error) {
        let isFirst = first.withLock { stored in
            guard stored == nil else { return false }
            stored = error
            return true
        }
        if isFirst { signal.notify() }
    }
}

/// A failure of the worker's own, for people: what went wrong and why the worker stopped.
public struct WorkerStopped: Error, Sendable, CustomStringConvertible {
    /// Why the worker stopped.
    public var reason: String

    /// A failure for `reason`.
    package init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { reason }
}
