import Kafka
import Logging
import Records
import Synchronization

extension DispatchWorker {
    /// Graceful shutdown begins (a signal, or a failure): no new record is taken, and the intake
    /// restarts so that the shutdown's commit is never held.
    func beginShutdown() {
        carryOut(core.withLock { $0.beginShutdown() })
        health?.shutdownBegan()
        shutdownRequested.notify()
    }

    /// Waits for graceful shutdown, then: records in flight finish (up to the drain limit), the
    /// work is committed, outputs are flushed, and the consumer leaves the group (which ends the
    /// event loop).
    func shutDownWhenRequested() async {
        let generation = shutdownRequested.generation
        if !core.withLock({ $0.isShuttingDown }) {
            await shutdownRequested.wait(after: generation)
        }
        guard !Task.isCancelled else {
            // Cancelled rather than shut down (the run's task was cancelled, or the consumer
            // closed already): commit nothing, but close the consumer all the same. Left open,
            // its poll thread would wait for a reader that is gone, the group would keep its
            // partitions until the session expired, and the run would never see its events end.
            // Closing a closed consumer does nothing.
            await consumer.close()
            return
        }
        var drained = false
        if failure.error == nil {
            logger.info("shutting down: finishing records in flight", metadata: [LogKey.inFlight: "\(core.withLock { $0.inFlight })"])
            drained = await waitUntilDrained(nil)
            if !drained {
                logger.warning("records still in flight at the drain limit are left uncommitted")
            }
        }
        if isTransactional {
            // Committed whole, or not at all: records left in flight (or a failure) abort it.
            if drained { await commitTransaction(final: true) }
            if !drained || failure.error != nil { await abortTransaction() }
        } else {
            await commit()
        }
        do {
            try await producer.flush(timeout: .seconds(10))
        } catch {
            logger.error("flush at shutdown failed", metadata: [LogKey.error: "\(error)"])
        }
        await consumer.close()
    }

    /// Waits for a failure that stops the worker (a fatal Kafka error, a dead letter that cannot
    /// be written), then fails health and shuts down without waiting for records in flight: what
    /// was acknowledged is committed, nothing after it.
    func stopOnFailure() async {
        let generation = failure.signal.generation
        if failure.error == nil { await failure.signal.wait(after: generation) }
        guard !Task.isCancelled, let error = failure.error else { return }
        logger.critical("the worker cannot go on; stopping", metadata: [LogKey.error: "\(error)"])
        health?.failed("\(error)")
        beginShutdown()
    }

    /// Waits until the partitions (all when `nil`) have nothing in flight, at most the drain limit.
    func waitUntilDrained(_ subset: Set<TopicPartition>?) async -> Bool {
        await wait(for: { self.core.withLock { $0.isDrained(subset) } }, signal: progress, limit: settings.drainLimit)
    }

    /// Waits until `condition` holds, re-checking it whenever `signal` is notified, at most `limit`.
    /// - Returns: whether the condition held in time.
    func wait(for condition: @escaping @Sendable () -> Bool, signal: CompletionSignal, limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    let generation = signal.generation
                    if condition() { return true }
                    await signal.wait(after: generation)
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(until: deadline)
                return false
            }
            let held = await group.next() ?? false
            group.cancelAll()
            return held
        }
    }
}
