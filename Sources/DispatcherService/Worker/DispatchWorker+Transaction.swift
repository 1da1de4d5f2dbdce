import Kafka
import Logging
import Synchronization

/// Exactly-once (`dispatch.guarantee: exactly-once`; docs/worker.md, "Exactly-once"): the worker's
/// outputs and its consumed offsets go in one transaction of its producer.
///
/// Outputs are produced inside the open transaction as in at-least-once mode. At each commit (the
/// commit interval, a revocation before its partitions go, shutdown) no record is taken in, the
/// records in flight finish, the offsets of what is done (per partition, the lowest offset not
/// done: everything below it is done, nothing above it was produced) go to the transaction, it
/// commits, and the next begins. A commit that cannot be made whole (records that do not finish
/// within the drain limit, a transactional error that requires an abort, a fatal one, fencing)
/// stops the worker: the transaction is aborted, and a restart processes again, from the committed
/// offsets, exactly the records whose outputs were aborted.
extension DispatchWorker {
    /// Registers the transactional id (fencing the worker's previous incarnation and aborting
    /// what it left open) and begins the first transaction. The coordinator not answering yet is
    /// waited for, until shutdown.
    /// - Throws: a fatal ``KafkaError`` (another worker fenced this one; no transaction support).
    func startTransactions() async throws {
        while true {
            if core.withLock({ $0.isShuttingDown }) { throw WorkerStopped("shut down before transactions were initialised") }
            let failure: KafkaError
            do {
                try await producer.initTransactions(timeout: .seconds(30))
                break
            } catch {
                failure = error
            }
            guard failure.isRetriable, !failure.isFatal else { throw failure }
            logger.warning("cannot initialise transactions yet", metadata: [LogKey.error: "\(failure)"])
            try? await Task.sleep(for: .seconds(1))
        }
        try producer.beginTransaction()
        logger.info(
            "exactly-once: transactions initialised",
            metadata: [LogKey.transactionalID: "\(settings.producer.transactionalID ?? "")"])
    }

    /// Takes a batch of consumed records into flight once no transaction is being committed: the
    /// event loop waits meanwhile (holding the consumer's intake, as flow control's hold would).
    /// - Returns: the records that may start now (at most one per ordering key).
    func takeBetweenCommits(_ messages: [KafkaMessage]) async -> [WorkItem] {
        while true {
            let generation = progress.generation
            let now = ContinuousClock.now
            if let effects = core.withLock({ $0.admitUnlessCommitting(messages, at: now) }) {
                carryOut(effects)
                return effects.start
            }
            await progress.wait(after: generation)
        }
    }

    /// Commits the open transaction with the offsets of everything done and begins the next
    /// (none when `final`); skipped when nothing was done since the last commit. Commits run one
    /// at a time. A failure stops the worker (``WorkerFailure``); the shutdown then aborts.
    func commitTransaction(final: Bool = false) async {
        await transactionTurns.run { await self.commitTransactionInTurn(final: final) }
    }

    private func commitTransactionInTurn(final: Bool) async {
        // Nothing done since the last commit: no offset to send, no output in the transaction
        // (an output belongs to a record that is done, or still running), nothing to drain for.
        guard failure.error == nil, !core.withLock({ $0.commitPlan().isEmpty }) else { return }
        core.withLock { $0.beginTransactionCommit() }
        if await !waitUntilDrained(nil) {
            stopTransactional(
                "records in flight did not finish within the drain limit (\(settings.drainLimit)), so the transaction "
                    + "cannot commit the outputs of those that did without writing some twice later")
            return
        }
        // Empty only if the partitions left meanwhile: then the transaction stays open as it is.
        let plan = core.withLock { $0.commitPlan() }
        do {
            if !plan.isEmpty {
                let group = try consumer.groupMetadata()
                try await retrying("sending the offsets to the transaction") { () async throws(KafkaError) in
                    try await self.producer.sendOffsetsToTransaction(plan, group: group, timeout: .seconds(30))
                }
                try await retrying("committing the transaction") { () async throws(KafkaError) in
                    try await self.producer.commitTransaction(timeout: .seconds(30))
                }
                core.withLock { $0.committed(plan) }
                if !final { try producer.beginTransaction() }
            }
        } catch {
            core.withLock { $0.commitFailed() }
            stop(transactionError: error)
            return
        }
        // Only a commit that succeeded lets records in again: after a failure the worker stops,
        // and its shutdown aborts what is open.
        core.withLock { $0.endTransactionCommit() }
        progress.notify()
    }

    /// Aborts the open transaction, for a worker that stops on a failure or could not drain: its
    /// outputs are never seen by `read_committed` readers, and their records are processed again
    /// from the committed offsets. A producer fenced or failed for good cannot abort; the
    /// coordinator aborts when the next incarnation starts (or the transaction times out).
    func abortTransaction() async {
        do {
            try await producer.abortTransaction(timeout: .seconds(10))
            logger.notice("exactly-once: the open transaction was aborted; its records will be processed again")
        } catch {
            logger.error("exactly-once: the open transaction could not be aborted", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// Runs a transactional call, again while it fails with a retriable error (at most 5 times,
    /// a second apart).
    private func retrying(_ step: String, _ call: @Sendable () async throws(KafkaError) -> Void) async throws(KafkaError) {
        var attempt = 1
        while true {
            let failure: KafkaError
            do {
                return try await call()
            } catch {
                failure = error
            }
            guard failure.isRetriable, !failure.requiresAbort, !failure.isFatal, attempt < 5 else { throw failure }
            logger.warning("exactly-once: \(step) failed; retrying", metadata: [LogKey.error: "\(failure)", LogKey.attempt: "\(attempt)"])
            attempt += 1
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Stops the worker for a transactional error, saying what it means.
    private func stop(transactionError error: any Error) {
        let kafkaError = error as? KafkaError
        let meaning =
            if kafkaError?.isFenced == true {
                "another producer with this worker's transactional id (\(settings.producer.transactionalID ?? "")) started and "
                    + "fenced it: a restart of this worker, or two workers with one id (give each its own metrics.workerId)"
            } else if kafkaError?.isFatal == true {
                "the producer failed for good"
            } else if kafkaError?.requiresAbort == true {
                "the transaction must be aborted (one of its records failed)"
            } else {
                "the transaction did not commit"
            }
        stopTransactional("committing the transaction failed: \(error); \(meaning)")
    }

    /// Records the failure that stops the worker: its shutdown aborts the open transaction.
    func stopTransactional(_ reason: String) {
        failure.record(
            WorkerStopped(
                "exactly-once: \(reason). The open transaction is aborted and the worker stops; a restart processes "
                    + "its records again from the last committed offsets"))
    }
}
