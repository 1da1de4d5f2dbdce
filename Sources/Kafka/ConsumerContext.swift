import Foundation
import Logging
import Records
import Synchronization

/// What a consumer's C callbacks see: a buffer for the events they report and the commits awaiting results.
///
/// The callbacks run inside `rd_kafka_consumer_poll`/`rd_kafka_consumer_close` on the consumer's poll
/// thread (one queue serves everything); they only append to ``pending`` or complete a commit waiter.
final class ConsumerContext: ClientContext, @unchecked Sendable {
    // @unchecked Sendable: all mutable state is in `Mutex`/`Atomic`.

    /// Events reported by callbacks, taken by the poll loop after each poll (keeps them in order with messages).
    let pending = Mutex<[PendingEvent]>([])
    /// Commits awaiting their result, by the address passed as `commit_opaque`; removing one completes it once.
    let commits = Mutex<[UInt: CommitWaiter]>([:])
    /// Set while `rd_kafka_consumer_close` runs: revocations are then released at once.
    let isClosing = Atomic<Bool>(false)
    /// Run in the rebalance callback with newly assigned partitions, before the assignment takes
    /// effect (``KafkaConsumer/init(configuration:logger:beforeAssign:)``).
    let beforeAssign: KafkaConsumer.BeforeAssign?
    /// Run in the rebalance callback with partitions lost (not while closing), before their
    /// ``ConsumerEvent/lost(_:)`` is reported (``KafkaConsumer/init(configuration:logger:beforeAssign:onLost:)``).
    let onLost: KafkaConsumer.OnLost?
    /// The member's own commits, below which no assignment starts (``CommittedFloor``).
    let committedFloor: CommittedFloor?
    /// Partitions ``beforeAssign`` held: assigned paused, never reported to the owner, given up at
    /// the next revocation. Read and written on the poll thread (the callbacks and the long hold).
    let held = Mutex<Set<TopicPartition>>([])

    /// A context that logs to `logger`, runs `beforeAssign` on each assignment and `onLost` on
    /// each loss, and starts no assignment below `committedFloor`.
    init(
        logger: Logger, beforeAssign: KafkaConsumer.BeforeAssign? = nil, onLost: KafkaConsumer.OnLost? = nil,
        committedFloor: CommittedFloor? = nil
    ) {
        self.beforeAssign = beforeAssign
        self.onLost = onLost
        self.committedFloor = committedFloor
        super.init(logger: logger)
    }

    /// A callback's report, converted by the poll loop.
    enum PendingEvent {
        /// A ready consumer event.
        case event(ConsumerEvent)
        /// Statistics JSON, parsed by the poll loop (not in the callback).
        case statistics(String)
    }

    /// Takes every pending event.
    func takePending() -> [PendingEvent] {
        pending.withLock { pending in
            guard !pending.isEmpty else { return [] }
            let taken = pending
            pending = []
            return taken
        }
    }

    /// Appends one callback event.
    func append(_ event: PendingEvent) {
        pending.withLock { $0.append(event) }
    }

    /// Forgets the held partitions among `partitions` and returns them.
    func takeHeld(among partitions: [TopicPartition]) -> Set<TopicPartition> {
        held.withLock { held in
            guard !held.isEmpty else { return [] }
            let taken = held.intersection(partitions)
            held.subtract(taken)
            return taken
        }
    }

    /// Registers a commit and returns the opaque pointer that identifies it.
    func register(_ waiter: CommitWaiter) -> UnsafeMutableRawPointer {
        let key = Unmanaged.passUnretained(waiter).toOpaque()
        commits.withLock { $0[UInt(bitPattern: key)] = waiter }
        return key
    }

    /// Removes the commit identified by `key` (nil when already completed).
    func takeCommit(_ key: UnsafeMutableRawPointer) -> CommitWaiter? {
        commits.withLock { $0.removeValue(forKey: UInt(bitPattern: key)) }
    }

    /// Fails every commit still awaiting a result (called after the handle is destroyed).
    func failOutstandingCommits() {
        let waiters = commits.withLock { commits in
            let taken = Array(commits.values)
            commits = [:]
            return taken
        }
        for waiter in waiters { waiter.complete(.failure(KafkaError.shutDown("commit")), logger: logger) }
    }
}

/// One commit awaiting its result: an awaited commit's continuation, or nothing for a fire-and-forget one.
final class CommitWaiter: Sendable {
    /// Resumed with the result; nil for ``KafkaConsumer/commitAsync(_:)``.
    private let continuation: CheckedContinuation<Result<Void, KafkaError>, Never>?

    /// Creates a waiter.
    init(_ continuation: CheckedContinuation<Result<Void, KafkaError>, Never>?) {
        self.continuation = continuation
    }

    /// Hands over the result (the registry guarantees this runs once); fire-and-forget failures are logged.
    func complete(_ result: Result<Void, KafkaError>, logger: Logger) {
        if let continuation {
            continuation.resume(returning: result)
        } else if case .failure(let error) = result {
            logger.warning("asynchronous commit failed", metadata: [KafkaLogKey.error: "\(error)"])
        }
    }
}
