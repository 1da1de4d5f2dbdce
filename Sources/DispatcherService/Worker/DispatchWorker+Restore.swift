import Dispatcher
import Foundation
import Kafka
import Logging
import Records
import Synchronization

extension DispatchWorker {
    /// What the consumer runs on its poll thread before each assignment takes effect, with
    /// partitioned state (``KafkaConsumer/BeforeAssign``). Kafka Streams' rule: a task's state is
    /// restored only once the task that wrote it last is closed and its changelog writes are
    /// acknowledged, to the end the changelog has then.
    ///
    /// 1. **The earlier assignment is closed.** Under the eager protocol nothing of it survives
    ///    the new one: partitions the core still owns were lost, and their `lost` event may not
    ///    have reached the event loop yet (it is handed over after this callback). They leave
    ///    the core now: their waiting records never start, their running ones become stale.
    /// 2. **Its records in flight end** (at most the drain limit): those deciding leave their
    ///    changes in the tables before step 3 empties them, instead of after the restore, where a
    ///    stale record's change stayed in the restored table although its outputs were dropped;
    ///    and the changelog records of those writing are acknowledged, so the restore reads them.
    /// 3. **The state is restored** (``PartitionedState/restore(assigned:committed:timeout:)``),
    ///    each failed attempt tried again a second later, within `dispatch.restoreLimit`.
    ///
    /// When step 2 or 3 cannot complete in time, the failure stops the worker, and the
    /// partitions are held: assigned paused and never taken in, so no record of a partition
    /// whose state was not restored is ever decided (docs/worker.md, "Partitioned state").
    /// - Returns: whether the assignment may take effect.
    func prepareAssignment(
        of partitions: [TopicPartition], committedOffsets: () throws(KafkaError) -> [TopicPartition: Int64]
    ) -> Bool {
        guard let state else { return true }
        let started = ContinuousClock.now
        guard finishEarlierAssignment() else { return false }
        return restore(state, partitions, committedOffsets: committedOffsets, before: started + settings.restoreLimit)
    }

    /// Steps 1 and 2 of ``prepareAssignment(of:committedOffsets:)``.
    /// - Returns: whether no record of an earlier assignment is left in flight; false when the
    ///   drain limit passed (the failure is recorded), the worker failed or is shutting down.
    private func finishEarlierAssignment() -> Bool {
        let closed = core.withLock { core -> (partitions: [TopicPartition], effects: WorkerEffects)? in
            let owned = Array(core.partitions.keys)
            return owned.isEmpty ? nil : (owned, core.lose(owned))
        }
        if let closed {
            logger.warning(
                "partitions of the earlier assignment were still owned when the next was assigned: lost, their records stale",
                metadata: [LogKey.partitions: "\(describe(closed.partitions))"])
            carryOut(closed.effects)
        }
        var inFlight = core.withLock { $0.inFlight }
        guard inFlight > 0 else { return true }
        logger.info(
            "waiting for the records of the earlier assignment to end before restoring",
            metadata: [LogKey.inFlight: "\(inFlight)"])
        let started = ContinuousClock.now
        let deadline = started + settings.drainLimit
        while true {
            let generation = progress.generation
            let (left, stopping) = core.withLock { ($0.inFlight, $0.isShuttingDown) }
            inFlight = left
            if stopping || failure.error != nil { return false }
            if inFlight == 0 {
                logger.info("the records of the earlier assignment ended", metadata: ["took": "\(ContinuousClock.now - started)"])
                return true
            }
            if !progress.blockingWait(after: generation, until: deadline), ContinuousClock.now >= deadline {
                break
            }
        }
        failure.record(
            WorkerStopped(
                "\(inFlight) record(s) of the earlier assignment were still in flight at the drain limit "
                    + "(\(DurationText.spell(settings.drainLimit))) when partitions were assigned: the state cannot be restored "
                    + "before their changelog records are written, so the worker stops; the group processes their records again"))
        return false
    }

    /// Step 3 of ``prepareAssignment(of:committedOffsets:)``: the committed offsets, then the
    /// restore, each failed attempt tried again a second later until `deadline`.
    /// - Returns: whether the state was restored; false when `deadline` passed (the failure is
    ///   recorded), the worker failed or is shutting down.
    private func restore(
        _ state: PartitionedState, _ partitions: [TopicPartition],
        committedOffsets: () throws(KafkaError) -> [TopicPartition: Int64], before deadline: ContinuousClock.Instant
    ) -> Bool {
        while true {
            do {
                let committed = try committedOffsets()
                let left = max(deadline - ContinuousClock.now, .seconds(1))
                if state.restore(assigned: partitions, committed: committed, timeout: left) { return true }
            } catch {
                // Without them the devices topic's state cannot be told from its events.
                logger.warning(
                    "cannot learn the committed offsets of the partitions assigned",
                    metadata: [LogKey.partitions: "\(describe(partitions))", LogKey.error: "\(error)"])
            }
            if failure.error != nil || core.withLock({ $0.isShuttingDown }) { return false }
            guard ContinuousClock.now + .seconds(1) < deadline else { break }
            Thread.sleep(forTimeInterval: 1)
        }
        failure.record(
            WorkerStopped(
                "the state of the partitions assigned (\(describe(partitions))) could not be restored within "
                    + "dispatch.restoreLimit (\(DurationText.spell(settings.restoreLimit))): they are held, none of their "
                    + "records is decided, and the worker stops rather than decide them on state it did not restore"))
        return false
    }
}

extension DispatchWorker {
    /// The worker, for the hook its consumer runs before each assignment: the consumer is made
    /// before the worker is whole, so the hook cannot capture it and finds it here (set at the
    /// end of `init`). Weak, so that the consumer, which keeps the hook, does not keep the worker.
    final class Reference: Sendable {
        private struct Weak: Sendable {
            weak var worker: DispatchWorker?
        }

        private let reference = Mutex(Weak())

        /// The worker, once set and while it exists.
        var worker: DispatchWorker? { reference.withLock { $0.worker } }

        /// Sets the worker.
        func set(_ worker: DispatchWorker) {
            reference.withLock { $0.worker = worker }
        }
    }
}
