import BlockingWork
public import Records
import Synchronization

/// Transactions (KIP-98), for a producer configured with a ``ProducerConfiguration/transactionalID``.
///
/// The cycle: ``initTransactions(timeout:)`` once (it fences every earlier producer with the same
/// id and aborts what such a producer left open), then for each transaction
/// ``beginTransaction()``, records sent as usual (``send(_:)-(Array<ProducerRecord>)``),
/// ``sendOffsetsToTransaction(_:group:timeout:)`` for the consumed offsets, and
/// ``commitTransaction(timeout:)`` (or ``abortTransaction(timeout:)``). Records sent outside an
/// open transaction are refused (`_STATE`).
///
/// Every call that waits for the cluster runs on a thread of its own, never on the cooperative pool.
/// Errors carry librdkafka's classification: ``KafkaError/isRetriable`` (call the same method
/// again), ``KafkaError/requiresAbort`` (abort, then the producer may begin again) and
/// ``KafkaError/isFatal`` (the producer is unusable: fenced by a newer one, say; only a new
/// producer recovers).
extension KafkaProducer {
    /// Registers the transactional id with its coordinator and fences earlier producers with the
    /// same id, waiting for any transaction they left open to end (aborted).
    ///
    /// - Throws: ``KafkaError``: `_TIMED_OUT` (retriable) when the coordinator did not answer in
    ///   `timeout`; `_NOT_CONFIGURED` without a transactional id; fatal when fenced.
    public func initTransactions(timeout: Duration) async throws(KafkaError) {
        try await transactionCall("initTransactions", timeout: timeout) { client, milliseconds in
            client.initTransactions(milliseconds: milliseconds)
        }
    }

    /// Begins a transaction: records sent from now on belong to it. A local call (no wait).
    ///
    /// - Throws: ``KafkaError`` when a transaction is open already, or the producer failed.
    public func beginTransaction() throws(KafkaError) {
        guard let client = core.state.withLock({ $0.client }) else { throw KafkaError.shutDown("beginTransaction") }
        if let error = client.beginTransaction() { throw error }
    }

    /// Adds consumed `offsets` (the next offset to read, per partition) to the open transaction:
    /// the group's committed offsets move to them if, and only if, the transaction commits.
    /// `group` is the consuming member's metadata (``KafkaConsumer/groupMetadata()``): the
    /// coordinator refuses it once that member's generation has passed.
    ///
    /// - Throws: ``KafkaError``; retriable ones may be retried, others require an abort or are fatal.
    public func sendOffsetsToTransaction(
        _ offsets: [TopicPartitionOffset], group: ConsumerGroupMetadata, timeout: Duration
    ) async throws(KafkaError) {
        try await transactionCall("sendOffsetsToTransaction", timeout: timeout) { client, milliseconds in
            client.sendOffsetsToTransaction(offsets, group: group, milliseconds: milliseconds)
        }
    }

    /// Commits the open transaction: waits until its records are delivered (a flush), then
    /// commits records and offsets at once.
    ///
    /// - Throws: ``KafkaError``: retriable (call again), ``KafkaError/requiresAbort`` (a record of
    ///   the transaction failed: abort it), or fatal.
    public func commitTransaction(timeout: Duration) async throws(KafkaError) {
        try await transactionCall("commitTransaction", timeout: timeout) { client, milliseconds in
            client.commitTransaction(milliseconds: milliseconds)
        }
    }

    /// Aborts the open transaction: its records are purged or marked aborted (a `read_committed`
    /// reader never sees them) and its offsets are not committed.
    ///
    /// - Throws: ``KafkaError``: retriable (call again), or fatal.
    public func abortTransaction(timeout: Duration) async throws(KafkaError) {
        try await transactionCall("abortTransaction", timeout: timeout) { client, milliseconds in
            client.abortTransaction(milliseconds: milliseconds)
        }
    }

    /// Runs a blocking transactional call on a thread of its own; throws its failure.
    private func transactionCall(
        _ name: String, timeout: Duration, _ call: @escaping @Sendable (RDKafkaClient, Int32) -> KafkaError?
    ) async throws(KafkaError) {
        guard let client = core.state.withLock({ $0.client }) else { throw KafkaError.shutDown(name) }
        let milliseconds = timeout.clampedMilliseconds
        let failure: KafkaError? = await BlockingWork.run(onThreadNamed: "kafka-transaction") {
            call(client, milliseconds)
        }
        if let failure { throw failure }
    }
}
