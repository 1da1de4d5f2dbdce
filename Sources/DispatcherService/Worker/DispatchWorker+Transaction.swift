import BlockingWork
import Dispatcher
import Kafka
import Logging
import Notifications
import Records
import Synchronization

/// Exactly-once (`dispatch.guarantee: exactly-once`; docs/worker.md, "Exactly-once"): the worker's
/// outputs and its consumed offsets go in one transaction of its producer.
///
/// Outputs are produced inside the open transaction as in at-least-once mode. At each commit (the
/// commit interval, a revocation before its partitions go, shutdown) no record is taken in, the
/// records in flight finish, the offsets of what is done (per partition, the lowest offset not
/// done: everything below it is done, nothing above it was produced) go to the transaction, it
/// commits, and the next begins. A transaction that cannot commit because one of its outputs
/// failed (a broker refused it for good, say), or whose commit requires an abort, is aborted and
/// its records processed again, in a new transaction, from the last commit (``rewindTransaction()``):
/// the worker goes on, the refused records becoming their dead letters. A commit that cannot be
/// made whole otherwise (records that do not finish within the drain limit, a fatal error,
/// fencing, rewinds that keep failing) stops the worker: the transaction is aborted, and a restart
/// processes again, from the committed offsets, exactly the records whose outputs were aborted.
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
        guard failure.error == nil else { return }
        // An output of the transaction failed: it cannot commit; it is rewound instead.
        if recovery.isRewindRequested {
            await rewindInTurn()
            return
        }
        // Nothing done since the last commit: no offset to send, no output in the transaction
        // (an output belongs to a record that is done, or still running), nothing to drain for.
        guard !core.withLock({ $0.commitPlan().isEmpty }) else { return }
        core.withLock { $0.beginTransactionCommit() }
        // An output that fails meanwhile gives its record up (it leaves flight) and asks for a
        // rewind: the drain ends then too.
        let recovery = recovery
        let drained = await wait(
            for: { self.core.withLock { $0.isDrained(nil) } || recovery.isRewindRequested }, signal: progress,
            limit: settings.drainLimit)
        if recovery.isRewindRequested {
            await rewindInTurn()
            return
        }
        if !drained {
            stopTransactional(
                "records in flight did not finish within the drain limit (\(settings.drainLimit)), so the transaction "
                    + "cannot commit the outputs of those that did without writing some twice later")
            return
        }
        // A failure meanwhile (partitions lost, say) stops the worker: nothing more is committed.
        guard failure.error == nil else { return }
        // Empty only if the partitions left meanwhile: then the transaction stays open as it is.
        let plan = core.withLock { $0.commitPlan() }
        do {
            if !plan.isEmpty {
                let group = try consumer.groupMetadata()
                try await retrying("sending the offsets to the transaction") { timeout async throws(KafkaError) in
                    try await self.producer.sendOffsetsToTransaction(plan, group: group, timeout: timeout)
                }
                // A worker that failed meanwhile never commits: it stops, and its shutdown aborts
                // the transaction. A worker continued after a pause past its session learns that
                // its partitions were lost while its offsets are being sent (librdkafka's threads
                // run again at once); Kafka would refuse a commit of those offsets (the group's
                // generation moved on), but a broker that checks no generation (Tansu) takes it,
                // moving the partitions back under their new owner (docs/faults.md).
                guard failure.error == nil else { return }
                // What is about to be committed: a worker killed while its commit is on its way
                // logs no acknowledgement, yet the broker may complete the commit (docs/testing.md,
                // Tansu's held-back offsets).
                logger.debug("exactly-once: committing a transaction", metadata: [LogKey.offsets: plan.loggedOffsets])
                try await retrying("committing the transaction") { timeout async throws(KafkaError) in
                    try await self.producer.commitTransaction(timeout: timeout)
                }
                core.withLock { $0.transactionCommitted(plan) }
                // What the broker acknowledged, for whoever must tell a broker's later answer of
                // older offsets from the worker's own mistake (docs/testing.md, Tansu).
                logger.debug("exactly-once: transaction committed", metadata: [LogKey.offsets: plan.loggedOffsets])
                committedFloor?.raise(plan)
                recovery.committed(plan, owned: core.withLock { Set($0.partitions.keys) })
                if !final { try producer.beginTransaction() }
            }
        } catch {
            core.withLock { $0.commitFailed() }
            // librdkafka's advice for an abortable error: abort, rewind the input, begin again.
            if error.requiresAbort, !error.isFatal, !final {
                logger.warning(
                    "exactly-once: committing the transaction failed; it is aborted and its records processed again",
                    metadata: [LogKey.error: "\(error)"])
                recovery.requestRewind()
                await rewindInTurn()
                return
            }
            stop(transactionError: error)
            return
        }
        // Only a commit that succeeded lets records in again: after a failure the worker stops,
        // and its shutdown aborts what is open.
        core.withLock { $0.endTransactionCommit() }
        progress.notify()
    }

    /// Exactly-once: aborts the open transaction, which cannot commit (an output of it failed, or
    /// its commit requires an abort), and processes its records again in a new transaction, from
    /// the last commit: librdkafka's way out of an abortable error (INTRODUCTION.md, "Transactional
    /// producer": abort, rewind the input, begin a new transaction). Runs when
    /// ``TransactionRecovery/requestRewind()`` asked for it, in turn with the commits.
    func rewindTransaction() async {
        await transactionTurns.run { await self.rewindInTurn() }
    }

    /// Waits for rewinds to be asked for and runs them, until cancelled.
    func rewindWhenAsked() async {
        // A worker that stops aborts at its shutdown, and rewinds nothing.
        while !Task.isCancelled, failure.error == nil {
            let generation = recovery.signal.generation
            if recovery.isRewindRequested {
                await rewindTransaction()
            } else {
                await recovery.signal.wait(after: generation)
            }
        }
    }

    /// The rewind, in its turn:
    /// 1. no record is taken in, and those waiting behind their keys are dropped;
    /// 2. the transaction is aborted (its outputs never reach `read_committed` readers; those
    ///    still queued in librdkafka fail as purged, and their records are given up);
    /// 3. every record in flight ends (at most the drain limit), done or given up;
    /// 4. each partition that took records since the last commit starts again from the first of
    ///    them (the offset the last commit left it at), with nothing in flight; with partitioned
    ///    state, the owned tables are restored as at an assignment, to the committed state;
    /// 5. the consumer seeks there (its messages fetched before are dropped until it says so);
    /// 6. a new transaction begins and records are taken in again. A record remembered as refused
    ///    (``TransactionRecovery``) is written as its dead letter when it comes again.
    private func rewindInTurn() async {
        guard failure.error == nil, recovery.beginRewind() else { return }
        carryOut(core.withLock { $0.beginRewind() })
        do {
            try await retrying("aborting the transaction") { timeout async throws(KafkaError) in
                try await self.producer.abortTransaction(timeout: timeout)
            }
        } catch {
            stopTransactional("aborting a transaction that cannot commit failed: \(error)")
            return
        }
        recovery.transactionAborted()
        if await !waitUntilDrained(nil) {
            stopTransactional(
                "records of an aborted transaction were still in flight at the drain limit (\(settings.drainLimit)), so its "
                    + "records cannot be processed again without writing some twice")
            return
        }
        if let reason = recovery.judgeRewind() {
            stopTransactional(reason)
            return
        }
        let (targets, assigned, isShuttingDown) = core.withLock { core in
            (core.completeRewind(), Array(core.partitions.keys), core.isShuttingDown)
        }
        guard failure.error == nil else { return }
        if isShuttingDown {
            // Nothing more is taken in: the records are left to the partitions' next owner, from
            // the last commit, and no transaction is begun (nothing is left to commit).
            recovery.endRewind(began: false)
            logger.notice("exactly-once: a transaction that could not commit was aborted during shutdown")
            core.withLock { $0.endTransactionCommit() }
            progress.notify()
            return
        }
        // Nothing taken in since the last commit changed no table. (Partitions being assigned are
        // restored by the assignment: the core owns none of them yet.)
        if let state, !targets.isEmpty, !(await restore(state, assigned: assigned, rewoundTo: targets)) {
            stopTransactional("the state of the partitions could not be restored after the transaction was aborted")
            return
        }
        do {
            try await consumer.rewind(targets, timeout: .seconds(30))
            guard failure.error == nil else { return }
            try producer.beginTransaction()
        } catch {
            stopTransactional("processing the aborted transaction's records again failed: \(error)")
            return
        }
        recovery.endRewind()
        logger.notice(
            "exactly-once: a transaction that could not commit was aborted; its records are processed again from the last commit",
            metadata: [
                LogKey.partitions: "\(describe(targets.map(\.topicPartition)))",
                LogKey.offsets: "\(targets.sorted { $0.partition < $1.partition }.map { "\($0.partition):\($0.offset)" }.joined(separator: ","))",
            ])
        core.withLock { $0.endTransactionCommit() }
        progress.notify()
    }

    /// Restores the owned tables as an assignment does (``PartitionedState/restore(assigned:committed:)``),
    /// after an abort: the devices topic to the offsets the partitions went back to, or, for those
    /// that took nothing since, to the group's committed offsets. Tried again within `dispatch.restoreLimit`.
    private func restore(_ state: PartitionedState, assigned: [TopicPartition], rewoundTo targets: [TopicPartitionOffset]) async -> Bool {
        let devices = assigned.filter { $0.topic == state.topics.devices }
        let giveUp = ContinuousClock.now + settings.restoreLimit
        while ContinuousClock.now < giveUp, failure.error == nil {
            do {
                var committed: [TopicPartition: Int64] = [:]
                if !devices.isEmpty {
                    for offset in try await consumer.committed(devices, timeout: .seconds(10)) where offset.offset >= 0 {
                        committed[offset.topicPartition] = offset.offset
                    }
                }
                for target in targets where target.topic == state.topics.devices { committed[target.topicPartition] = target.offset }
                let restored = await BlockingWork.run(onThreadNamed: "state-restore") { [committed] in
                    state.restore(
                        assigned: assigned, committed: committed, timeout: max(giveUp - ContinuousClock.now, .seconds(1)),
                        waitsForOpenTransactions: false)
                }
                if restored { return true }
            } catch {
                logger.warning("cannot read the committed offsets of the devices partitions", metadata: [LogKey.error: "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
        return false
    }

    /// Exactly-once: the `OutputRejected` dead letter a record processed again is, when an
    /// output of its was refused for good in an aborted transaction (``TransactionRecovery``);
    /// nil for any other record (at once when no refusal is remembered). Made without deciding
    /// the record again, so that it changes no state (a Live Activity command, a stored
    /// notification), as its outputs never reached the changelogs. A devices record is still
    /// applied to its table (the devices topic is its own changelog), and a request whose launch
    /// was refused still decided (its delivery is written before the dead letter, as at-least-once
    /// writes them): their results are replaced when published (``OutputPublisher``).
    func refusedInTransaction(_ message: KafkaMessage) -> DispatchResult? {
        guard let refusal = recovery.refusal(of: message.position), let rejection = refusal.rejection, !refusal.isLaunch,
            message.topic != state?.topics.devices
        else { return nil }
        return dispatcher.outputRejected(RequestRecord(message), detail: rejection, tooLarge: refusal.isTooLarge)
    }

    /// Exactly-once: an output of a record decided in place failed after librdkafka took it: met
    /// as the publisher meets its own (``OutputPublisher/failedInTransaction(_:kind:topic:of:metadata:)``),
    /// since the record's replay the owned way finds its transaction unable to take records.
    /// Nothing at-least-once, where the replay meets the failure itself.
    func failedInPlace(_ error: KafkaError, of record: InPlaceRecord, in table: WorkerCore.PartitionTable, output: OutputBuffer.Topic) {
        guard isTransactional else { return }
        let topics = dispatcher.configuration.topics
        let (kind, topic): (OutputRecord.Kind, String) =
            switch output {
            case .deliveries: (.delivery, topics.deliveries)
            case .launches: (.launch, topics.launches)
            case .deadLetter: (.deadLetter, topics.deadLetter)
            case .feedback: (.feedback, topics.feedback)
            case .badges: (.badge, topics.badges)
            }
        let partition = table.partitions[record.partition]
        let offset = record.inFlight.offset
        publisher.failedInTransaction(
            error, kind: kind, topic: topic,
            of: TopicPartitionOffset(topic: partition.topic, partition: partition.partition, offset: offset),
            metadata: [
                LogKey.topic: "\(topic)", LogKey.partition: "\(partition.partition)", LogKey.offset: "\(offset)",
                LogKey.error: "\(error)",
            ])
    }

    /// Aborts the open transaction, for a worker that stops on a failure or could not drain: its
    /// outputs are never seen by `read_committed` readers, and their records are processed again
    /// from the committed offsets. A producer fenced or failed for good cannot abort; the
    /// coordinator aborts when the next incarnation starts (or the transaction times out).
    ///
    /// A commit's call still in progress (its offsets being sent when the partitions were lost)
    /// makes librdkafka refuse the abort as a conflict until it returns, within its own timeout;
    /// the commit then stops short of committing (``commitTransactionInTurn(final:)``), and the
    /// abort is made again. Given up on, the abort would leave the transaction to be aborted by the
    /// next incarnation, while a commit could still follow the call in progress.
    func abortTransaction() async {
        // A rewind aborted it already and began no other.
        guard !recovery.hasAborted else { return }
        let giveUp = ContinuousClock.now + Self.transactionCallTimeout
        while true {
            do {
                try await producer.abortTransaction(timeout: .seconds(10))
                logger.notice("exactly-once: the open transaction was aborted; its records will be processed again")
                return
            } catch where error.isConflictingCall && ContinuousClock.now < giveUp {
                try? await Task.sleep(for: .milliseconds(50))
            } catch {
                logger.error("exactly-once: the open transaction could not be aborted", metadata: [LogKey.error: "\(error)"])
                return
            }
        }
    }

    /// How long one transactional call waits for the coordinator.
    static let transactionCallTimeout: Duration = .seconds(30)

    /// Runs a transactional call (given ``transactionCallTimeout``), again while it fails with a
    /// retriable error: at most 5 times, a second apart, and only while another attempt would end
    /// within the transaction timeout of the first one's start, and the worker is not stopping.
    ///
    /// A coordinator that cannot be reached (a worker cut off from the cluster) lets every attempt
    /// wait its whole timeout, and meanwhile the event loop, which takes no record while a commit
    /// runs, does not see the partitions lost either: five attempts held a worker cut off for
    /// minutes before it stopped. A transaction open for longer than its timeout is aborted by its
    /// coordinator, so it cannot commit anyway; and a stopping worker aborts it itself.
    private func retrying(_ step: String, _ call: @Sendable (Duration) async throws(KafkaError) -> Void) async throws(KafkaError) {
        let timeout = Self.transactionCallTimeout
        let started = ContinuousClock.now
        var attempt = 1
        while true {
            let failure: KafkaError
            do {
                return try await call(timeout)
            } catch {
                failure = error
            }
            let isStopping = self.failure.error != nil || Task.isCancelled
            let fitsTheTransaction = ContinuousClock.now - started + .seconds(1) + timeout < settings.producer.transactionTimeout
            guard failure.isRetriable, !failure.requiresAbort, !failure.isFatal, attempt < 5, !isStopping, fitsTheTransaction else {
                throw failure
            }
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
        failure.record(Self.transactionalStop(reason))
    }

    /// The failure that stops an exactly-once worker for `reason`.
    static func transactionalStop(_ reason: String) -> WorkerStopped {
        WorkerStopped(
            "exactly-once: \(reason). The open transaction is aborted and the worker stops; a restart processes "
                + "its records again from the last committed offsets")
    }
}
