import Dispatcher
import Foundation
import Kafka
import Logging
import Notifications
import Synchronization

extension DispatchWorker {
    /// Runs records that may start now (at most one per ordering key), then the records that
    /// waited behind them; `decided` are records decided already (their extensions ended).
    ///
    /// Records decided without a service extension (most of them) are decided in order here and
    /// their outputs produced together, in one batch awaited once. A record that needs an
    /// extension starts it (``startExtension(of:_:)``) and is done here: its result comes back
    /// through ``extensionResults``. A task per batch rather than per record keeps the cost per
    /// record low.
    func run(_ items: [WorkItem], decided: [Decided] = []) async {
        var batch = items
        var decided = decided
        repeat {
            decided.reserveCapacity(decided.count + batch.count)
            // One reading of the clock per batch, the `now` of its records (section 11.1).
            let receivedAt = Date()
            for item in batch {
                switch prepare(item, receivedAt: receivedAt) {
                case .decided(let result): decided.append(Decided(item: item, result: result))
                case .extensionNeeded(let pending): startExtension(of: item, pending)
                // Live Activity commands are executed inline until the worker routes them by
                // activity token (partitioned state).
                case .activity(let work):
                    decided.append(Decided(item: item, result: dispatcher.execute(work, tables: tables, now: receivedAt)))
                }
            }
            batch = await publish(decided)
            decided = []
        } while !batch.isEmpty
    }

    /// A record and its decision.
    struct Decided: Sendable {
        var item: WorkItem
        var result: DispatchResult
    }

    /// Starts a record's service extension; its decided result goes to ``extensionResults``.
    ///
    /// No task of the worker's waits for it: up to `maxInFlight` records wait on extensions at
    /// once, and a task waiting for each (with the async frames of every call level in between)
    /// was a third of the worker's memory per waiting record. The extension's own task is bounded
    /// by its deadline and grace, which also bounds how long the record stays in flight.
    private func startExtension(of item: WorkItem, _ pending: PendingExtension) {
        let results = extensionResults
        pending.start { result in results.push(Decided(item: item, result: result)) }
    }

    /// Publishes the results of extensions as they end, those that ended together as one batch,
    /// then runs the records that waited behind them; until cancelled.
    func publishExtensionResults() async {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                let decided = await extensionResults.next()
                guard !decided.isEmpty else { continue }
                group.addTask { await self.run([], decided: decided) }
            }
        }
    }

    /// The first stage of dispatching a record: decided, or waiting on an extension. A response
    /// is always decided here: no extension runs for it.
    private func prepare(_ item: WorkItem, receivedAt: Date) -> DispatchStep {
        let record = RequestRecord(item.message)
        if item.message.topic == settings.responsesTopic {
            return .decided(dispatcher.respond(record, appStates: appStates, receivedAt: receivedAt))
        }
        return dispatcher.prepare(record, tables: tables, now: receivedAt)
    }

    /// Produces the outputs of decided records and, once the broker acknowledged them, finishes
    /// the records (``WorkerCore/finish(_:stale:outputBytes:)``).
    ///
    /// - Returns: the records that waited behind these for their keys and may start now; a
    ///   record given up (the task was cancelled before the acknowledgements, or the producer
    ///   stopped the worker) is not done, so its offset is never committed and its key's next
    ///   record does not start.
    private func publish(_ decided: [Decided]) async -> [WorkItem] {
        guard !decided.isEmpty else { return [] }
        // The outputs (an extension's content among them) are held until acknowledged: flow
        // control counts them beside the records they came from.
        let outputBytes = decided.reduce(0) { total, record in
            record.result.outputs.reduce(total) { $0 + OutputLimit.size(of: $1) }
        }
        let (isCurrent, held) = core.withLock { $0.beginPublishing(decided.map(\.item), outputBytes: outputBytes) }
        carryOut(held)
        // Results of partitions that left this worker meanwhile are dropped: their new owner
        // processes the records again.
        var current: [Decided] = []
        current.reserveCapacity(decided.count)
        var stale: [WorkItem] = []
        for (record, isCurrent) in zip(decided, isCurrent) {
            if isCurrent { current.append(record) } else { stale.append(record.item) }
        }
        let written = await publisher.publish(current.map(\.result), of: current.map(\.item.message))
        let published = zip(current, written).map { WorkerCore.Published(item: $0.item, result: $1) }
        let finished = core.withLock { $0.finish(published, stale: stale, outputBytes: outputBytes) }
        metrics?.observe(published)
        // Finishing records is progress too: while flow control holds the intake, no event
        // reaches the loop, and liveness must not fail a worker that is draining its work.
        health?.loopRan()
        carryOut(finished)
        return finished.start
    }
}
