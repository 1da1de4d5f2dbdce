import Dispatcher
import Foundation
import Kafka
import Logging
import Notifications
import Records
import Synchronization

extension DispatchWorker {
    /// Runs records that may start now (at most one per ordering key), then the records that
    /// waited behind them; `decided` are records decided already (their extensions ended).
    ///
    /// Requests that wait for nothing more (most records that waited behind their key) are
    /// decided on views of their copies and produced as a lent batch's are (``takeCopied(_:output:)``);
    /// the other records are decided in order here and their outputs produced together, in one
    /// batch awaited once. A record that needs an extension starts it (``startExtension(of:_:)``)
    /// and is done here: its result comes back through ``extensionResults``. A task per batch
    /// rather than per record keeps the cost per record low.
    func run(_ items: [WorkItem], decided: [Decided] = []) async {
        var batch = items
        var decided = decided
        var output = OutputBuffer()
        repeat {
            decided.reserveCapacity(decided.count + batch.count)
            var viewed: [WorkItem] = []
            var others: [WorkItem] = []
            // Most often every record is decided on its view (requests released from behind their
            // keys): the batch is taken as it is, without a retain and an append per record.
            if batch.allSatisfy(decidesOnView) {
                viewed = batch
            } else {
                for item in batch {
                    if decidesOnView(item) { viewed.append(item) } else { others.append(item) }
                }
            }
            var copied: LentWork?
            if !viewed.isEmpty {
                let work = await takeCopied(viewed, output: &output)
                others += work.owned
                copied = work
            }
            // One reading of the clock per batch, the `now` of its records (section 11.1).
            let receivedAt = Date()
            for item in others {
                switch prepare(item, receivedAt: receivedAt) {
                case .one(.decided(let result)): decided.append(Decided(item: item, result: result))
                case .one(.extensionNeeded(let pending)): startExtension(of: item, pending)
                case .one(.activity(let work)):
                    decided.append(Decided(item: item, result: executeOrForward(work, of: item.message, now: receivedAt)))
                case .several(let steps):
                    if let result = begin(steps, of: item, now: receivedAt) { decided.append(Decided(item: item, result: result)) }
                }
            }
            batch = await publish(decided)
            if let copied { batch += await completeInPlace(copied) }
            decided = []
        } while !batch.isEmpty
    }

    /// Whether a record is a request decided on its view: one that has not been decided yet
    /// (nothing it waits for is known), whose output did not fail on its view, and that no
    /// aborted transaction refused.
    private func decidesOnView(_ item: WorkItem) -> Bool {
        // A copy is a request that waited behind its key, not decided yet: its topic is not read
        // (a string's retain per record).
        if case .message = item.content {
            guard item.wait == nil, !item.replaying, item.topic == settings.requestsTopic else { return false }
        }
        return !recovery.hasRefusals || !recovery.isRefused(item.partition, offset: item.offset)
    }

    /// A record and its decision.
    struct Decided: Sendable {
        var item: WorkItem
        var result: DispatchResult
        /// How many of the result's outputs were written already (a record decided in place whose
        /// launch failed after its delivery was acknowledged goes on from its launch).
        var written = 0
        /// Why its first output failed when it was decided in place: the publisher meets it as
        /// its own failure (``OutputPublisher/publish(_:of:startingAt:failedBefore:stillCurrent:)``).
        var failedBefore: KafkaError?
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

    /// What a record starts: one step (a request or a response, a Live Activity command of the
    /// internal topic), or several (the stored notifications a devices record delivers, none for
    /// most devices records).
    enum Prepared {
        case one(DispatchStep)
        case several([DispatchStep])
    }

    /// The first stage of dispatching a record, chosen by its topic: decided, waiting on an
    /// extension, or Live Activity work. A response is always decided here: no extension runs
    /// for it.
    private func prepare(_ item: WorkItem, receivedAt: Date) -> Prepared {
        let message = item.message
        if let deadLetter = refusedInTransaction(message) { return .one(.decided(deadLetter)) }
        if message.topic == settings.responsesTopic {
            return .one(.decided(dispatcher.respond(RequestRecord(message), appStates: appStates, receivedAt: receivedAt)))
        }
        if let state, message.topic != settings.requestsTopic {
            if message.topic == state.topics.devices { return prepareDevicesRecord(message, state: state, now: receivedAt) }
            if message.topic == state.topics.badges {
                applyBadgesRecord(message, state: state)
                return .several([])
            }
            if message.topic == state.topics.activityRepartition {
                do {
                    let command = try ActivityCommand(parsing: RequestRecord(message))
                    return .one(.activity(ActivityWork(commands: [command])))
                } catch {
                    state.ignore(message, name: "activity command", problem: "\(error)")
                    return .several([])
                }
            }
        }
        if let wait = item.wait {
            return .one(dispatcher.proceed(wait, record: RequestRecord(message), tables: tables, now: receivedAt))
        }
        return .one(dispatcher.prepare(RequestRecord(message), tables: tables, now: receivedAt))
    }

    /// A devices record consumed by the group: applied to the devices table (a malformed one is
    /// logged, counted and ignored) and, when it brings a token back online, the steps that
    /// deliver what was stored for it (section 16.3). One the restore applied already does nothing.
    private func prepareDevicesRecord(_ message: KafkaMessage, state: PartitionedState, now: Date) -> Prepared {
        if state.isRestored(message) { return .several([]) }
        let outcome = dispatcher.applyDevicesRecord(
            key: message.key, value: message.value, devices: state.devices, tables: tables,
            source: message.position, now: now)
        if case .invalid(let reason) = outcome.update { state.ignore(message, name: "devices", problem: "\(reason)") }
        return .several(outcome.steps)
    }

    /// A badges record consumed by the group (section 21.1): a provider's reset replaces a count;
    /// the worker's own records come back and change nothing (``BadgesTable/applyConsumed(key:value:)``).
    /// One the restore applied already does nothing; a malformed one is logged, counted and ignored.
    private func applyBadgesRecord(_ message: KafkaMessage, state: PartitionedState) {
        guard !state.isRestored(message), let badges = state.badges else { return }
        if case .invalid(let reason) = badges.applyConsumed(key: message.key, value: message.value) {
            state.ignore(message, name: "badges", problem: reason)
        }
    }

    /// Executes a command here when the record is keyed by the command's activity token in the
    /// partition that owns it (an update or end sent to the activity, a command of the internal
    /// topic): such records of one activity run one after another (``WorkerCore``'s shared
    /// ordering). Every other command (a start, keyed by its device; a broadcast's fan-out) goes
    /// to the activity-repartition topic, to the token's partition, and runs there in its turn.
    /// Without partitioned state every command is executed here.
    func executeOrForward(_ work: ActivityWork, of message: KafkaMessage, now: Date) -> DispatchResult {
        guard let state else { return dispatcher.execute(work, tables: tables, now: now) }
        var parts: [DispatchResult] = []
        var outputs: [OutputRecord] = []
        var forwarded = false
        for command in work.commands {
            let owner = state.partition(ofActivityToken: command.activityToken)
            if owner == message.partition, message.key.map({ $0.elementsEqual(command.activityToken.utf8) }) == true {
                let result = dispatcher.execute(command, tables: tables, now: now)
                parts.append(result)
                outputs += result.outputs
            } else {
                var record = command.record(topic: state.topics.activityRepartition)
                record.partition = owner
                outputs.append(record)
                forwarded = true
            }
        }
        if !forwarded, parts.count == 1, work.trailing.isEmpty { return parts[0] }
        return DispatchResult(.several(parts), outputs: outputs + work.trailing)
    }

    /// Starts the steps of one record that has several (a devices record's stored deliveries):
    /// - Returns: the record's result when no step needs an extension; nil when some do: they
    ///   run together (each bounded by its deadline) and the combined result goes to
    ///   ``extensionResults``.
    private func begin(_ steps: [DispatchStep], of item: WorkItem, now: Date) -> DispatchResult? {
        let started = StartedSteps(steps) { executeOrForward($0, of: item.message, now: now) }
        if let results = started.results { return DispatchResult(severalOf: results) }
        let inbox = extensionResults
        // Rare (a device back online with stored notifications that need extensions): one task
        // for the record, ended by the longest of its extensions' deadlines.
        Task { inbox.push(Decided(item: item, result: DispatchResult(severalOf: await started.finish()))) }
        return nil
    }

    /// `result` with its changelog records (activities, stored) placed in the partition of their
    /// key's state (``PartitionedState/partition(ofChangelog:causedBy:)``): the restore of a
    /// partition reads the same partition of each changelog. Mostly the partition of the record
    /// that caused them; an evicted activity's tombstone goes to its own token's.
    private func placed(_ result: DispatchResult, of message: KafkaMessage) -> DispatchResult {
        guard let state, result.outputs.contains(where: { Self.isChangelog($0) && $0.partition == nil }) else { return result }
        return DispatchResult(
            result.decision,
            outputs: result.outputs.map { output in
                guard Self.isChangelog(output), output.partition == nil else { return output }
                var placed = output
                placed.partition = state.partition(ofChangelog: output, causedBy: message)
                return placed
            })
    }

    private static func isChangelog(_ output: OutputRecord) -> Bool {
        output.kind == .activity || output.kind == .stored || output.kind == .badge
    }

    /// Produces the outputs of decided records and, once the broker acknowledged them, finishes
    /// the records (``WorkerCore/finish(_:stale:outputBytes:)``).
    ///
    /// - Returns: the records that waited behind these for their keys and may start now; a
    ///   record given up (the task was cancelled before the acknowledgements, or the producer
    ///   stopped the worker) is not done, so its offset is never committed and its key's next
    ///   record does not start; one whose partition left before all its outputs were written is
    ///   stale, like one that left before they were produced.
    private func publish(_ decided: [Decided]) async -> [WorkItem] {
        guard !decided.isEmpty else { return [] }
        // The outputs (an extension's content among them) are held until acknowledged: flow
        // control counts them beside the records they came from.
        let outputBytes = decided.reduce(0) { $0 + $1.result.outputBytes }
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
        let written = await publisher.publish(
            current.map { placed($0.result, of: $0.item.message) }, of: current.map(\.item.message), startingAt: current.map(\.written),
            failedBefore: current.map(\.failedBefore)
        ) { indices in core.withLock { core in indices.map { core.isCurrent(current[$0].item) } } }
        // A record not written whose partition left meanwhile is stale too: done without outputs,
        // and the next record of its key starts (its new owner processes it again).
        let leftMeanwhile = written.contains { $0 == nil } ? core.withLock { core in current.map { !core.isCurrent($0.item) } } : nil
        var published: [WorkerCore.Published] = []
        published.reserveCapacity(current.count)
        for (index, (record, result)) in zip(current, written).enumerated() {
            if result == nil, leftMeanwhile?[index] == true {
                stale.append(record.item)
            } else {
                published.append(WorkerCore.Published(item: record.item, result: result))
            }
        }
        let finished = core.withLock { $0.finish(published, stale: stale, outputBytes: outputBytes) }
        metrics?.observe(published)
        // Finishing records is progress too: while flow control holds the intake, no event
        // reaches the loop, and liveness must not fail a worker that is draining its work.
        health?.loopRan()
        carryOut(finished)
        return finished.start
    }
}
