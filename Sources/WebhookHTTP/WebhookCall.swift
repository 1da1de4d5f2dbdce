import NIOCore
import Synchronization

/// One POST in flight: its request, its limits, and the continuation its caller waits on.
///
/// The continuation is resumed exactly once, by whichever comes first: the response, a failure on
/// the connection, the caller's cancellation, or the client's own deadline. Each of those goes
/// through ``state``, so a late one finds the call finished and does nothing.
final class WebhookCall: Sendable, PoolWaiter {
    #if DEBUG
    /// Debug builds (the test suites) check that each call's caller is resumed exactly once: a
    /// second resume would be reported by name instead of corrupting the runtime's state.
    typealias Continuation = CheckedContinuation<WebhookResponse, any Error>

    /// Suspends the caller until `start`'s continuation is resumed.
    static func suspend(_ start: (Continuation) -> Void) async throws -> WebhookResponse {
        try await withCheckedThrowingContinuation(start)
    }
    #else
    /// Release builds resume without the check's allocation; ``state`` makes each resume the only one.
    typealias Continuation = UnsafeContinuation<WebhookResponse, any Error>

    /// Suspends the caller until `start`'s continuation is resumed.
    static func suspend(_ start: (Continuation) -> Void) async throws -> WebhookResponse {
        try await withUnsafeThrowingContinuation(start)
    }
    #endif

    /// Where the call is.
    enum State {
        /// Made, not yet started by its caller.
        case created
        /// Cancelled before it started: starting it fails at once.
        case cancelledEarly
        /// Waiting for a connection (queued in the pool, or its own connection being made).
        case pending(Continuation)
        /// Written, or about to be, on `connection`.
        case running(Continuation, PooledConnection)
        /// Resumed.
        case finished
    }

    /// The whole request, in one buffer.
    let request: ByteBuffer
    /// The request's head, for the response decoder.
    let template: WebhookRequestTemplate
    /// The client's own deadline: the call fails with ``WebhookHTTPError/Code/timedOut`` then.
    let backstop: NIODeadline
    /// The largest response body accepted.
    let maxResponseBytes: Int
    private let state = Mutex(State.created)
    /// Whether the call was already sent again after a reused connection turned out dead.
    private let resent = Atomic(false)

    init(request: ByteBuffer, template: WebhookRequestTemplate, backstop: NIODeadline, maxResponseBytes: Int) {
        self.request = request
        self.template = template
        self.backstop = backstop
        self.maxResponseBytes = maxResponseBytes
    }

    /// Hands the call its continuation; false (having failed it) when it was cancelled already.
    func begin(_ continuation: Continuation) -> Bool {
        let started = state.withLock { state in
            guard case .created = state else {
                state = .finished
                return false
            }
            state = .pending(continuation)
            return true
        }
        if !started { continuation.resume(throwing: WebhookHTTPError(.cancelled, "the webhook call was cancelled")) }
        return started
    }

    /// Whether the call still waits for a connection (a finished one is skipped in the queue).
    var isPending: Bool {
        state.withLock { if case .pending = $0 { true } else { false } }
    }

    /// Moves the call onto `connection`; false when it finished meanwhile (the connection is then
    /// free for another call).
    func attach(to connection: PooledConnection) -> Bool {
        state.withLock { state in
            guard case .pending(let continuation) = state else { return false }
            state = .running(continuation, connection)
            return true
        }
    }

    /// Takes the call off its connection to send it again on another: once per call, and only
    /// while it runs; false otherwise (the caller then fails it).
    func detachToResend() -> Bool {
        state.withLock { state in
            guard case .running(let continuation, _) = state, !resent.exchange(true, ordering: .relaxed) else { return false }
            state = .pending(continuation)
            return true
        }
    }

    /// Takes the call off a connection that closed before the request was written, so that it
    /// waits for another; false when it finished meanwhile.
    func detachUnsent() -> Bool {
        state.withLock { state in
            guard case .running(let continuation, _) = state else { return false }
            state = .pending(continuation)
            return true
        }
    }

    /// Resumes the caller with `result`, unless the call finished already.
    func finish(_ result: Result<WebhookResponse, WebhookHTTPError>) {
        let continuation: Continuation? = state.withLock { state in
            switch state {
            case .pending(let continuation), .running(let continuation, _):
                state = .finished
                return continuation
            case .created, .cancelledEarly, .finished:
                return nil
            }
        }
        continuation?.resume(with: result.mapError { $0 })
    }

    /// Fails the call as cancelled; a call running on a connection has that connection closed,
    /// so that its response is never read by the next call.
    func cancel() {
        let (continuation, connection): (Continuation?, PooledConnection?) = state.withLock { state in
            switch state {
            case .created:
                state = .cancelledEarly
                return (nil, nil)
            case .pending(let continuation):
                state = .finished
                return (continuation, nil)
            case .running(let continuation, let connection):
                state = .finished
                return (continuation, connection)
            case .cancelledEarly, .finished:
                return (nil, nil)
            }
        }
        continuation?.resume(throwing: WebhookHTTPError(.cancelled, "the webhook call was cancelled"))
        connection?.abandon(self)
    }
}
