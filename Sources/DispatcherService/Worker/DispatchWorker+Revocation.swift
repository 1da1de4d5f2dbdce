import Kafka
import Logging
import Records
import Synchronization

extension DispatchWorker {
    /// Partitions are being revoked: they take no new records, and their waiting records are
    /// dropped at once (exactly-once: they run too). The revocation completes in
    /// ``completeRevocation(_:)``.
    func beginRevocation(of partitions: [TopicPartition]) -> WorkerCore.Revocation {
        let dropsWaiting = !isTransactional
        let (effects, revocation) = core.withLock { $0.beginRevoking(partitions, dropsWaiting: dropsWaiting) }
        carryOut(effects)
        return revocation
    }

    /// Finishes the work of revoked partitions, commits it (exactly-once: commits the
    /// transaction, which holds the other partitions' work too), then lets the partitions go: those
    /// that still have the assignment epoch they were revoked in (one lost and assigned again
    /// meanwhile is a new assignment, not this revocation's to release). With partitioned state
    /// (as under exactly-once) records still in flight at the drain limit stop the worker: a
    /// partition's changelog writes are acknowledged before it goes (Kafka Streams' rule).
    func completeRevocation(_ revocation: WorkerCore.Revocation) async {
        let partitions = revocation.partitions
        logger.info("partitions revoked", metadata: [LogKey.partitions: "\(describe(partitions))"])
        let drained = await waitUntilDrained(partitions)
        guard !Task.isCancelled else {
            // The run ended while this revocation waited: the consumer closed (a rebalance's
            // revocation came just before the shutdown, which drained, committed and closed
            // meanwhile; or a failure closed it), and the run cancelled what still ran; or the
            // run's task itself was cancelled. A cancelled wait returns at once, so `drained`
            // says nothing about records in flight. The shutdown, or the failure, decided what is
            // committed, and a closed consumer commits nothing more.
            logger.debug("revocation ended by the consumer's close", metadata: [LogKey.partitions: "\(describe(partitions))"])
            carryOut(core.withLock { $0.completeRevocation(revocation) })
            return
        }
        if isTransactional {
            if drained {
                await commitTransaction()
            } else {
                stopTransactional("revoked partitions still had records in flight at the drain limit (\(describe(partitions)))")
            }
        } else {
            if !drained, state != nil {
                // Their changelog records may land after the next owner restored the partitions
                // (their outputs are retried for up to dispatch.outputRetryLimit), and undo later
                // changes there: the worker stops, which ends those retries.
                failure.record(
                    WorkerStopped(
                        "revoked partitions (\(describe(partitions))) still had records in flight at the drain limit: "
                            + "with partitioned state a partition goes only once its changelog records are written, so the "
                            + "worker stops; the next owner processes those records again"))
            } else if !drained {
                logger.warning(
                    "revoked partitions still had records in flight at the drain limit; their new owner processes them again",
                    metadata: [LogKey.partitions: "\(describe(partitions))"]
                )
            }
            await commit(partitions)
        }
        carryOut(core.withLock { $0.completeRevocation(revocation) })
    }

    /// Partitions were lost (the session expired): forgotten at once, without a commit.
    func lose(_ partitions: [TopicPartition]) {
        // Closing reports the partitions still owned as lost: expected then, and their work was
        // committed by the shutdown sequence before.
        let effects = core.withLock { core in (core.isShuttingDown, core.lose(partitions)) }
        logger.log(level: effects.0 ? .debug : .warning, "partitions lost", metadata: [LogKey.partitions: "\(describe(partitions))"])
        carryOut(effects.1)
        // Exactly-once, the worker was stopped already, on the poll thread, before this event
        // came (the consumer's `onLost`, set in `init`).
    }
}
