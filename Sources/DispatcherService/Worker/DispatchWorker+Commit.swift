import Kafka
import Logging
import Records
import Synchronization

extension DispatchWorker {
    /// Commits every `dispatch.commitInterval` (exactly-once: commits the transaction), then
    /// reports stalls.
    func commitPeriodically() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: settings.commitInterval)
            if isTransactional {
                await commitTransaction()
            } else {
                await commit()
            }
            reportStalls()
            state?.reportFullTables()
        }
    }

    /// Commits every partition (or the given ones) up to its lowest offset not done; skipped
    /// when nothing moved. A failed commit is logged and counted, never fatal: the next one
    /// covers it.
    func commit(_ subset: Set<TopicPartition>? = nil) async {
        let plan = core.withLock { $0.commitPlan(for: subset) }
        guard !plan.isEmpty else { return }
        do {
            try await consumer.commit(plan)
            core.withLock { $0.committed(plan) }
        } catch {
            core.withLock { $0.commitFailed() }
            logger.warning("commit failed", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// Reports partitions whose oldest record in flight is older than the stall limit (their
    /// commit cannot have moved for that long) to health, and the stalled partitions and the
    /// records in flight past the drain limit to metrics.
    private func reportStalls() {
        let now = ContinuousClock.now
        let (stalled, overdue) = core.withLock {
            $0.stalls(stalledAfter: settings.stalledPartitionLimit, overdueAfter: settings.drainLimit, at: now)
        }
        metrics?.stalls(stalledPartitions: stalled.count, overdueRecords: overdue)
        health?.partitionsStalled(stalled.map { "\($0.topic)[\($0.partition)]" })
    }
}
