import Records
import Synchronization

/// Exactly-once: what the worker knows of an open transaction that cannot commit any more, and of
/// the records whose outputs the brokers refused for good (docs/worker.md, "Exactly-once").
///
/// A produce that fails after librdkafka sent it (a broker's refusal, a time-out) leaves the
/// transaction unable to commit: librdkafka counts the failed delivery reports and its commit then
/// requires an abort (`rd_kafka_txn_op_commit_transaction`, rdkafka_txnmgr.c; a broker's permanent
/// error also puts the transaction in the abortable state at once, rdkafka_request.c). So the
/// publisher gives such a record up and asks for a rewind here; the worker aborts the transaction
/// and processes everything since the last commit again (``DispatchWorker/rewindTransaction()``).
/// A record refused for good is remembered, by its place, with the refusal: processed again, it
/// becomes its dead letter at once (``OutputPublisher/replacement(of:decided:_:)``), in the new
/// transaction with its offset, as at-least-once writes it. A dead letter refused for its size is
/// remembered too, and written cut to its minimal form; refused again, nothing can account for
/// the request and the worker stops (``OutputPublisher/onUnwritable``).
///
/// Rewinds that remember no new refusal (a failure with no record to blame, such as the
/// out-of-order sequence a Kafka broker answers to the first batch after an aborted refusal)
/// are bounded: after ``fruitlessLimit`` of them without a commit, the worker stops.
final class TransactionRecovery: Sendable {
    /// Why a record is written as its dead letter when it is processed again.
    struct Refusal: Sendable, Equatable {
        /// The `OutputRejected` dead letter's detail, when a delivery, action record or launch of
        /// the record was refused (nil: its own dead letter was refused, for its size).
        var rejection: String?
        /// Whether that refusal was for the record's size (`dlq-status` 413).
        var isTooLarge = false
        /// Whether the output refused was a launch: the delivery before it is written, then the
        /// dead letter, as at-least-once writes them.
        var isLaunch = false
        /// Whether the dead letter was refused for its size too: it is written cut to its
        /// minimal form.
        var isMinimal = false
    }

    /// Where the recovery is.
    private enum Phase {
        /// The transaction is open and nothing failed.
        case open
        /// An output failed: a rewind is due.
        case requested
        /// A rewind runs: failures of the aborted transaction's records are its own.
        case rewinding
    }

    private struct State {
        var phase = Phase.open
        var refusals: [TopicPartitionOffset: Refusal] = [:]
        /// Refusals remembered so far (new ones tell a fruitful rewind from a fruitless one).
        var remembered = 0
        var rememberedAtLastRewind = 0
        /// Rewinds in a row that remembered no new refusal, since the last commit.
        var fruitless = 0
    }

    /// Rewinds in a row without a new refusal and without a commit after which the worker stops.
    static let fruitlessLimit = 3

    private let state = Mutex(State())
    /// Whether a rewind aborted the transaction and no other began since: a shutdown has nothing to abort.
    private let aborted = Atomic<Bool>(false)
    /// Whether any refusal is remembered: read without the lock for every record decided.
    private let anyRefusal = Atomic<Bool>(false)
    /// Notified when a rewind is requested.
    let signal = CompletionSignal()

    /// Asks for a rewind: the open transaction cannot commit. Ignored while one is due or runs
    /// (the failures then are those of the transaction it aborts).
    /// - Returns: whether this asked first.
    @discardableResult
    func requestRewind() -> Bool {
        let requested = state.withLock { state in
            guard state.phase == .open else { return false }
            state.phase = .requested
            return true
        }
        if requested { signal.notify() }
        return requested
    }

    /// Whether a rewind is due (requested, not begun).
    var isRewindRequested: Bool { state.withLock { $0.phase == .requested } }

    /// A rewind begins, if one is due.
    /// - Returns: false when none is due.
    func beginRewind() -> Bool {
        state.withLock { state in
            guard state.phase == .requested else { return false }
            state.phase = .rewinding
            return true
        }
    }

    /// The rewind's records all ended: whether it found a refusal to remember since the last one.
    /// - Returns: nil, or why the worker must stop (rewinds in a row that remembered nothing).
    func judgeRewind() -> String? {
        state.withLock { state in
            if state.remembered == state.rememberedAtLastRewind {
                state.fruitless += 1
            } else {
                state.fruitless = 0
            }
            state.rememberedAtLastRewind = state.remembered
            guard state.fruitless >= Self.fruitlessLimit else { return nil }
            return "the transaction failed \(state.fruitless) times in a row without a refused record to account for it"
        }
    }

    /// The rewind aborted the transaction (``hasAborted``).
    func transactionAborted() {
        aborted.store(true, ordering: .releasing)
    }

    /// Whether the last transaction was aborted by a rewind that began no other.
    var hasAborted: Bool { aborted.load(ordering: .acquiring) }

    /// The rewind ended (the next transaction began, unless the worker shuts down): failures
    /// from now on are the new transaction's.
    func endRewind(began: Bool = true) {
        if began { aborted.store(false, ordering: .releasing) }
        state.withLock { $0.phase = .open }
    }

    /// A transaction committed: refusals of records below the committed offsets are done with
    /// (kept for the partitions still owned and not committed past them), and rewinds count
    /// afresh.
    func committed(_ plan: [TopicPartitionOffset], owned: Set<TopicPartition>) {
        let committed = Dictionary(plan.map { ($0.topicPartition, $0.offset) }, uniquingKeysWith: max)
        let remaining = state.withLock { state in
            state.fruitless = 0
            state.refusals = state.refusals.filter { place, _ in
                owned.contains(place.topicPartition) && committed[place.topicPartition].map { place.offset >= $0 } ?? true
            }
            return state.refusals.count
        }
        anyRefusal.store(remaining > 0, ordering: .releasing)
    }

    /// Remembers that the record at `place` is to be written as its `OutputRejected` dead letter.
    func rememberRejection(of place: TopicPartitionOffset, detail: String, isTooLarge: Bool, isLaunch: Bool) {
        remember(place) { refusal in
            refusal.rejection = detail
            refusal.isTooLarge = isTooLarge
            refusal.isLaunch = isLaunch
        }
    }

    /// Remembers that the record at `place` is to be written with its dead letter cut to its
    /// minimal form.
    /// - Returns: false when it was already (the minimal form was refused too).
    func rememberMinimalDeadLetter(of place: TopicPartitionOffset) -> Bool {
        var isNew = false
        remember(place) { refusal in
            isNew = !refusal.isMinimal
            refusal.isMinimal = true
        }
        return isNew
    }

    private func remember(_ place: TopicPartitionOffset, _ change: (inout Refusal) -> Void) {
        state.withLock { state in
            change(&state.refusals[place, default: Refusal()])
            state.remembered += 1
        }
        anyRefusal.store(true, ordering: .releasing)
    }

    /// Whether any refusal is remembered (cheap: no lock).
    var hasRefusals: Bool { anyRefusal.load(ordering: .acquiring) }

    /// The refusal remembered for the record at `place`, if any (cheap when none is).
    func refusal(of place: TopicPartitionOffset) -> Refusal? {
        guard anyRefusal.load(ordering: .acquiring) else { return nil }
        return state.withLock { $0.refusals[place] }
    }

    /// Whether the record at `offset` of `partition` is to be written as its dead letter (cheap
    /// when no refusal is remembered).
    func isRefused(_ partition: TopicPartition, offset: Int64) -> Bool {
        guard anyRefusal.load(ordering: .acquiring) else { return false }
        let place = TopicPartitionOffset(topic: partition.topic, partition: partition.partition, offset: offset)
        return state.withLock { $0.refusals[place] != nil }
    }
}
