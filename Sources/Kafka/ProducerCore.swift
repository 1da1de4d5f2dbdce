import Synchronization
import Logging

/// The outcome of one produce call, handed from the delivery-report callback to `send`.
///
/// The errors are boxed (`indirect`): an outcome is then a word or two with no strings inline, so
/// the worker's read of each acknowledged record's outcome is a plain load. Unboxed, the strings
/// of `KafkaError` made the optional outcome of each slot a type Swift copied and destroyed
/// through the runtime's value witnesses, for every record.
enum DeliveryOutcome: Sendable {
    /// The broker stored the record here.
    case delivered(partition: Int32, offset: Int64)
    /// librdkafka did not take the record (no delivery report will come).
    indirect case rejected(KafkaError)
    /// The delivery report carried this error.
    indirect case failed(KafkaError)
}

/// The producer's shared state and its poll thread; shared by ``KafkaProducer`` and that thread.
final class ProducerCore: Sendable {
    /// Where the producer is in its life.
    enum Phase {
        /// Taking records.
        case running
        /// Shutting down: no new records; flush for at most this many milliseconds, then purge.
        case stopping(flushMilliseconds: Int32)
        /// The handle is gone.
        case stopped
    }

    /// A `flush` caller waiting for the poll thread to flush.
    struct FlushRequest {
        /// The flush time limit.
        var milliseconds: Int32
        /// Resumed with the flush result.
        var continuation: CheckedContinuation<Result<Void, KafkaError>, Never>
    }

    /// Everything the poll thread and callers share.
    struct State {
        /// The handle; nil once shut down (the poll thread then drops the last reference and destroys it).
        var client: RDKafkaClient?
        /// Where the producer is in its life.
        var phase: Phase = .running
        /// `send`s waiting for room after librdkafka's local queue was full; resumed after every poll.
        var queueSpaceWaiters: [UnsafeContinuation<Void, Never>] = []
        /// `flush` callers for the poll thread to serve.
        var flushRequests: [FlushRequest] = []
        /// `shutdown` callers, resumed once the handle is destroyed.
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
        /// Topic handles made for the in-place path (``topic(named:)``); dropped (and so
        /// destroyed, before the client's handle, as librdkafka requires) when the producer stops.
        var topics: RDKafkaTopicHandles?
    }

    /// The shared state.
    let state: Mutex<State>
    /// For shutdown warnings.
    let logger: Logger

    /// Creates the core around a producer handle.
    init(client: RDKafkaClient, logger: Logger) {
        state = Mutex(State(client: client, topics: RDKafkaTopicHandles(client: client)))
        self.logger = logger
    }

    /// Enqueues `records` from `start` on, in order, under one lock (taking the lock once per
    /// record contended with the poll thread, which takes it on every round: 2.4 % of the
    /// worker's CPU in the lock's slow path). Stops at the first record the full local queue
    /// refuses.
    /// - Returns: where it stopped (`records.count` when every record was taken), whether the
    ///   local queue was full there, and the records refused for any other reason.
    func enqueue(
        _ records: [ProducerRecord], from start: Int, opaque: (Int) -> UnsafeMutableRawPointer
    ) -> (next: Int, queueFull: Bool, rejected: [(index: Int, error: KafkaError)]) {
        let enqueued = withRunningClient { client in
            // Through the array's buffer: each record is lent to `produce` where it lies, where the
            // array's subscript handed over a copy (a retain and a release of each of its references).
            records.withUnsafeBufferPointer { records in
                var rejected: [(index: Int, error: KafkaError)] = []
                for index in start..<records.count {
                    guard let error = client.produce(records[index], opaque: opaque(index)) else { continue }
                    if error.isLocalQueueFull { return (next: index, queueFull: true, rejected: rejected) }
                    rejected.append((index, error))
                }
                return (next: records.count, queueFull: false, rejected: rejected)
            }
        }
        return enqueued ?? (records.count, false, (start..<records.count).map { ($0, KafkaError.shutDown("send")) })
    }

    /// Runs `body` with the client under the lock while the producer takes records, so shutdown
    /// cannot slip in between the check and the produce; nil once it stopped taking them.
    private func withRunningClient<Result: Sendable>(_ body: (RDKafkaClient) -> Result) -> Result? {
        state.withLock { state in
            guard case .running = state.phase, let client = state.client else { return nil }
            return body(client)
        }
    }

    /// Runs `body` under the lock with the client while the producer takes records, else with nil.
    func withClientIfRunning<Result: Sendable, Failure: Error>(_ body: (RDKafkaClient?) throws(Failure) -> Result) throws(Failure) -> Result {
        try state.withLock { (state) throws(Failure) -> Result in
            guard case .running = state.phase, let client = state.client else { return try body(nil) }
            return try body(client)
        }
    }

    /// The handle on topic `name`, made on first use; nil once the producer stopped.
    func topic(named name: String) -> ProducerTopic? {
        state.withLock { state in
            guard case .running = state.phase, let handle = state.topics?.handle(named: name) else { return nil }
            return ProducerTopic(handle: handle, name: name)
        }
    }

    /// Suspends until the poll thread has served delivery reports (room may have been freed) or shutdown began.
    func waitForQueueSpace() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let waiting = state.withLock { state in
                guard case .running = state.phase else { return false }
                state.queueSpaceWaiters.append(continuation)
                return true
            }
            if !waiting { continuation.resume() }
        }
    }

    /// Asks the poll thread to flush and suspends until it has.
    func flush(milliseconds: Int32) async -> Result<Void, KafkaError> {
        await withCheckedContinuation { continuation in
            let client: RDKafkaClient? = state.withLock { state in
                guard case .running = state.phase, let client = state.client else { return nil }
                state.flushRequests.append(FlushRequest(milliseconds: milliseconds, continuation: continuation))
                return client
            }
            if let client {
                client.yield()
            } else {
                continuation.resume(returning: .failure(KafkaError.shutDown("flush")))
            }
        }
    }

    /// Stops taking records and asks the poll thread to flush, purge and destroy; returns its client to wake.
    func requestStop(flushMilliseconds: Int32, waiter: CheckedContinuation<Void, Never>?) {
        let outcome: (client: RDKafkaClient?, resumeNow: Bool) = state.withLock { state in
            switch state.phase {
            case .running:
                state.phase = .stopping(flushMilliseconds: flushMilliseconds)
                if let waiter { state.shutdownWaiters.append(waiter) }
                return (state.client, false)
            case .stopping:
                if let waiter { state.shutdownWaiters.append(waiter) }
                return (nil, false)
            case .stopped:
                return (nil, true)
            }
        }
        outcome.client?.yield()
        if outcome.resumeNow { waiter?.resume() }
    }

    /// The poll thread's body: serves delivery reports until shutdown, then flushes, purges and destroys.
    func runPollThread() {
        let finished = pollUntilStopped()
        // The handle is destroyed by now (this thread held its last reference); wake everyone.
        for waiter in finished.queueSpaceWaiters { waiter.resume() }
        for request in finished.flushRequests { request.continuation.resume(returning: .failure(KafkaError.shutDown("flush"))) }
        for waiter in finished.shutdownWaiters { waiter.resume() }
    }

    /// Polls until asked to stop, then shuts the handle down; returns the callers still waiting.
    private func pollUntilStopped() -> State {
        guard let client = state.withLock({ $0.client }) else { return State(client: nil) }
        var flushMilliseconds: Int32 = 0
        while true {
            let (waiters, flushes, stop) = state.withLock { state -> ([UnsafeContinuation<Void, Never>], [FlushRequest], Int32?) in
                let waiters = state.queueSpaceWaiters
                let flushes = state.flushRequests
                state.queueSpaceWaiters = []
                state.flushRequests = []
                if case .stopping(let milliseconds) = state.phase { return (waiters, flushes, milliseconds) }
                return (waiters, flushes, nil)
            }
            for waiter in waiters { waiter.resume() }
            for request in flushes {
                let error = client.flush(milliseconds: request.milliseconds)
                request.continuation.resume(returning: error.map { .failure($0) } ?? .success(()))
            }
            if let stop {
                flushMilliseconds = stop
                break
            }
            client.poll(milliseconds: 100)
        }
        if let flushError = client.flush(milliseconds: flushMilliseconds) {
            logger.warning("producer shutdown: records not delivered in time are failed as purged", metadata: [KafkaLogKey.error: "\(flushError.name)"])
        }
        // Purged records get delivery reports with an error: serve them so that every `send` resumes.
        client.purgeQueued()
        var rounds = 0
        while client.queueLength > 0, rounds < 300 {
            client.poll(milliseconds: 100)
            rounds += 1
        }
        client.poll(milliseconds: 0)
        return state.withLock { state in
            // No produce uses them any more (the phase is not running): destroyed here, while
            // this thread still holds the client.
            state.topics = nil
            var finished = state
            finished.client = nil
            state.phase = .stopped
            state.client = nil
            state.queueSpaceWaiters = []
            state.flushRequests = []
            state.shutdownWaiters = []
            return finished
        }
    }
}
