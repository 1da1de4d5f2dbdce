import Dispatcher
import Foundation
import Kafka
import Logging
import Notifications
import Synchronization

extension DispatchWorker {
    /// Runs records that may start now (at most one per ordering key), then the records that
    /// waited behind them.
    ///
    /// Records decided without a service extension (most of them) are decided in order here and
    /// their outputs produced together, in one batch awaited once. Each record that needs an
    /// extension gets a child task of its own, which then runs its key's later records. A task
    /// per consumed batch rather than per record keeps the cost per record low, and keeps each task
    /// group small (removing a child from a task group walks its list of children).
    func run(_ items: [WorkItem]) async {
        await withDiscardingTaskGroup { group in
            var batch = items
            while !batch.isEmpty {
                var decided: [Decided] = []
                decided.reserveCapacity(batch.count)
                for item in batch {
                    switch prepare(item) {
                    case .decided(let result):
                        decided.append(Decided(item: item, result: result))
                    case .extensionNeeded(let pending):
                        group.addTask { await self.runKey(startingWith: item, pending) }
                    }
                }
                batch = await publish(decided)
            }
        }
    }

    /// A record and its decision.
    struct Decided: Sendable {
        var item: WorkItem
        var result: DispatchResult
    }

    /// Runs a record that waits on its extension, then each record that waited behind it for
    /// the same key, one after another.
    ///
    /// Up to `maxInFlight` of these wait at once, each keeping the async frames of the calls
    /// below for the whole extension call. Hence the small steps, out of line: each frame holds
    /// little more than the record, and the decided record's values live only in
    /// ``publish(_:)``'s frame, after the wait.
    private func runKey(startingWith first: WorkItem, _ pending: PendingExtension) async {
        var next = await runExtension(of: first, pending)
        while let item = next {
            next = await runSuccessor(item)
        }
    }

    /// Runs a record's extension and publishes the record's outputs.
    /// - Returns: the next record of its key, if one waits.
    @inline(never)
    private func runExtension(of item: WorkItem, _ pending: PendingExtension) async -> WorkItem? {
        await publish(item, await pending.run())
    }

    /// Publishes one record's outputs (``publish(_:)``).
    /// - Returns: the next record of its key, if one waits.
    @inline(never)
    private func publish(_ item: WorkItem, _ result: DispatchResult) async -> WorkItem? {
        await publish([Decided(item: item, result: result)]).first
    }

    /// Runs a record that waited behind another of its key.
    /// - Returns: the next record of its key, if one waits (a record's successors are of its
    ///   key, so there is at most one).
    @inline(never)
    private func runSuccessor(_ item: WorkItem) async -> WorkItem? {
        switch prepare(item) {
        case .decided(let result): await publish(item, result)
        case .extensionNeeded(let pending): await runExtension(of: item, pending)
        }
    }

    /// The first stage of dispatching a record: decided, or waiting on an extension. A response
    /// is always decided here: no extension runs for it.
    @inline(never)
    private func prepare(_ item: WorkItem) -> DispatchStep {
        let record = RequestRecord(item.message)
        if item.message.topic == settings.responsesTopic {
            return .decided(dispatcher.respond(record, appStates: appStates, receivedAt: Date()))
        }
        return dispatcher.prepare(record, appStates: appStates, receivedAt: Date())
    }

    /// Produces the outputs of decided records and, once the broker acknowledged them, finishes
    /// the records (``WorkerCore/finish(_:stale:outputBytes:)``).
    ///
    /// - Returns: the records that waited behind these for their keys and may start now; a
    ///   record given up (the task was cancelled before the acknowledgements, or the producer
    ///   stopped the worker) is not done, so its offset is never committed and its key's next
    ///   record does not start.
    @inline(never)
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
