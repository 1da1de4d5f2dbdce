public import Dispatcher
import Foundation
import Kafka
public import Logging
import Notifications
public import ServiceLifecycle
import Synchronization

/// One member of the consumer group: consumes requests and responses, dispatches them (requests
/// under their deadlines), produces their outputs and commits only what is done (ARCHITECTURE.md,
/// "The worker").
///
/// - Records with the same ordering key run one after another; others run concurrently, each as a
///   child task of the worker's task group, up to the flow-control limits.
/// - A record is done when every output it produced is acknowledged by the broker; per partition
///   the worker commits the lowest offset not done, periodically, on revocation and at shutdown.
/// - Graceful shutdown stops intake, lets records in flight finish within ``WorkerSettings/drainLimit``,
///   commits, flushes and leaves the group.
public final class DispatchWorker: Service, Sendable {
    private let settings: WorkerSettings
    private let dispatcher: Dispatcher
    private let appStates: AppStatesTable
    private let consumer: KafkaConsumer
    /// Internal, not private: tests raise a fatal error through it.
    let producer: KafkaProducer
    private let logger: Logger
    /// Metrics and health hooks (nil: not observed, as in benchmarks and the demo).
    private let metrics: WorkerMetrics?
    private let health: WorkerHealth?

    /// Writes the outputs of decided records.
    private let publisher: OutputPublisher
    /// The first failure that stops the worker for good.
    private let failure = WorkerFailure()

    private let state: Mutex<WorkerState>
    private let counters = Mutex(WorkerStatistics())
    /// Whether the consumer's intake is held now; guards the hold and restart calls so they are
    /// applied in the order the decisions were made.
    private let intakeHeld = Mutex(false)
    /// Notified whenever a record finishes or partitions leave: drain waits listen to it.
    private let progress = CompletionSignal()
    /// Notified once, when graceful shutdown begins.
    private let shutdownRequested = CompletionSignal()

    /// Creates the worker and its Kafka clients; nothing is consumed before ``run()``.
    ///
    /// - Throws: ``KafkaError`` when a client cannot be created (a bad librdkafka property).
    public init(
        settings: WorkerSettings,
        dispatcher: Dispatcher,
        appStates: AppStatesTable = AppStatesTable(),
        logger: Logger,
        metrics: WorkerMetrics? = nil,
        health: WorkerHealth? = nil
    ) throws {
        self.settings = settings
        self.metrics = metrics
        self.health = health
        self.dispatcher = dispatcher
        self.appStates = appStates
        self.logger = logger
        self.state = Mutex(
            WorkerState(
                flow: FlowControl(
                    maxRecords: settings.maxInFlight,
                    maxBytes: settings.maxBufferedBytes,
                    resumeRatio: settings.resumeRatio
                )
            )
        )
        let failure = self.failure
        let producer = try KafkaProducer(configuration: settings.producer, logger: logger) { error in
            failure.record(error)
        }
        self.producer = producer
        self.consumer = try KafkaConsumer(configuration: settings.effectiveConsumer, logger: logger)
        self.publisher = OutputPublisher(
            producer: producer, dispatcher: dispatcher, retryLimit: settings.outputRetryLimit, logger: logger,
            metrics: metrics, onUnwritable: { reason in failure.record(WorkerStopped(reason)) })
    }

    /// The worker's counters now.
    public var statistics: WorkerStatistics {
        var snapshot = counters.withLock { $0 }
        state.withLock { state in
            snapshot.inFlight = state.inFlight
            snapshot.isPaused = state.isPaused
            snapshot.assignedPartitions = state.partitions.count
        }
        return snapshot
    }

    /// Runs until graceful shutdown completes or the consumer fails for good.
    public func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                do {
                    if let topic = settings.appStatesTopic {
                        let caughtUp = try startAppStates(topic: topic, in: &group)
                        let loaded = await wait(for: { caughtUp.generation > 0 }, signal: caughtUp, limit: .seconds(30))
                        if !loaded {
                            logger.warning("app-states table not loaded after 30 s; starting anyway", metadata: [LogKey.topic: "\(topic)"])
                        }
                    }
                    try await checkOutputTopics()
                    try consumer.subscribe(topics: settings.consumedTopics)
                } catch {
                    logger.critical("cannot start the worker", metadata: [LogKey.error: "\(error)"])
                    failure.record(error)
                    group.cancelAll()
                    await consumer.close()
                    return
                }
                logger.info(
                    "worker started",
                    metadata: [
                        LogKey.topic: "\(settings.consumedTopics.joined(separator: ","))",
                        LogKey.group: "\(settings.consumer.groupID)",
                        LogKey.ordering: "\(settings.ordering.rawValue)",
                    ]
                )
                group.addTask { await self.commitPeriodically() }
                if let health { group.addTask { await self.reportProducerConnection(to: health) } }
                group.addTask { await self.shutDownWhenRequested() }
                group.addTask { await self.stopOnFailure() }

                for await event in consumer.events {
                    health?.loopRan()
                    switch event {
                    case .messages(let messages):
                        let ready = admit(messages)
                        if !ready.isEmpty {
                            group.addTask { await self.run(ready) }
                        }
                    case .assigned(let partitions):
                        assign(partitions)
                    case .revoked(let partitions):
                        let (actions, epochs) = state.withLock { $0.beginRevoking(partitions) }
                        applyFlow(actions)
                        group.addTask { await self.completeRevocation(of: epochs) }
                    case .lost(let partitions):
                        // Closing reports the partitions still owned as lost: expected then, and
                        // their work was committed by the shutdown sequence before.
                        let level: Logger.Level = state.withLock { $0.isShuttingDown } ? .debug : .warning
                        logger.log(level: level, "partitions lost", metadata: [LogKey.partitions: "\(describe(partitions))"])
                        let actions = state.withLock { $0.remove(partitions) }
                        metrics?.forget(partitions)
                        counters.withLock { $0.rebalances += 1 }
                        applyFlow(actions)
                        progress.notify()
                    case .statistics(let statistics):
                        let lag = statistics.consumerLag.values.reduce(0) { $0 + max($1, 0) }
                        counters.withLock { $0.lag = lag }
                        metrics?.received(statistics)
                    case .error(let error):
                        if error.isFatal {
                            failure.record(error)
                        } else {
                            logger.warning("Kafka error", metadata: [LogKey.error: "\(error)"])
                        }
                    }
                }
                // The consumer closed: whatever still runs (the ticker, the app-states reader,
                // records past the drain limit) is cancelled; their offsets stay uncommitted.
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.beginShutdown()
        }

        await producer.shutdown()
        logger.info("worker stopped", metadata: [LogKey.group: "\(settings.consumer.groupID)"])
        if let error = failure.error { throw error }
    }

    /// Refuses to start when an output topic is unknown or not authorised: every request would
    /// otherwise become a dead letter (or, for the dead-letter topic, none could be written). A
    /// cluster not reachable yet is waited for, until shutdown.
    private func checkOutputTopics() async throws {
        guard !settings.outputTopics.isEmpty else { return }
        while !state.withLock({ $0.isShuttingDown }) {
            do {
                try await producer.checkTopics(settings.outputTopics, timeout: .seconds(5))
                return
            } catch where error.produceFailure == .permanent {
                throw WorkerStopped("an output topic cannot be used: \(error)")
            } catch {
                logger.warning("cannot check the output topics yet", metadata: [LogKey.error: "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Waits for a failure that stops the worker (a fatal Kafka error, a dead letter that cannot
    /// be written), then fails health and shuts down without waiting for records in flight: what
    /// was acknowledged is committed, nothing after it.
    private func stopOnFailure() async {
        let generation = failure.signal.generation
        if failure.error == nil { await failure.signal.wait(after: generation) }
        guard !Task.isCancelled, let error = failure.error else { return }
        logger.critical("the worker cannot go on; stopping", metadata: [LogKey.error: "\(error)"])
        health?.failed("\(error)")
        beginShutdown()
    }

    // MARK: Intake

    /// Takes a batch of consumed records into flight; returns those that may start now.
    private func admit(_ messages: [KafkaMessage]) -> [WorkItem] {
        var ready: [WorkItem] = []
        var actions: [FlowControl.Action] = []
        var admitted: [KafkaMessage] = []
        var rewinds: [WorkerState.Rewind] = []
        state.withLock { state in
            for message in messages {
                let (admission, action, rewind) = state.admit(message, orderingKey: orderingKey(of: message))
                if let action { actions.append(action) }
                if let rewind { rewinds.append(rewind) }
                if case .start(let item) = admission { ready.append(item) }
                if case .dropped = admission {} else { admitted.append(message) }
            }
        }
        for rewind in rewinds {
            logger.warning(
                "the consumer went back to an earlier offset; processing from there again",
                metadata: [
                    LogKey.topic: "\(rewind.partition.topic)", LogKey.partition: "\(rewind.partition.partition)",
                    LogKey.offset: "\(rewind.offset)", "kafka.previous_next_offset": "\(rewind.previousNext)",
                ])
        }
        if !rewinds.isEmpty { counters.withLock { $0.offsetRewinds += rewinds.count } }
        metrics?.admitted(admitted)
        counters.withLock { $0.consumed += messages.count }
        applyFlow(actions)
        return ready
    }

    private func orderingKey(of message: KafkaMessage) -> OrderingKey? {
        switch settings.ordering {
        case .key: .device(TopicPartition(topic: message.topic, partition: message.partition), token: message.key ?? [])
        case .partition: .partition(TopicPartition(topic: message.topic, partition: message.partition))
        case .unordered: nil
        }
    }

    private func assign(_ partitions: [TopicPartition]) {
        state.withLock { $0.assign(partitions) }
        counters.withLock { $0.rebalances += 1 }
        logger.info("partitions assigned", metadata: [LogKey.partitions: "\(describe(partitions))"])
        health?.joinedGroup()
    }

    // MARK: Processing

    /// Runs records that may start now (at most one per ordering key), then the records that
    /// waited behind them.
    ///
    /// Records decided without a service extension (most of them) are decided in order here and
    /// their outputs produced together, in one batch awaited once. Each record that needs an
    /// extension gets a child task of its own, which then runs its key's later records. A task
    /// per consumed batch rather than per record keeps the cost per record low, and keeps each task
    /// group small (removing a child from a task group walks its list of children).
    private func run(_ items: [WorkItem]) async {
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
                batch = await complete(decided)
            }
        }
    }

    /// Runs a record that waits on its extension, then each record that waited behind it for
    /// the same key, one after another.
    ///
    /// Up to `maxInFlight` of these wait at once, each keeping the async frames of the calls
    /// below for the whole extension call. Hence the small steps, out of line: each frame holds
    /// little more than the record, and the decided record's values live only in
    /// ``complete(_:)``'s frame, after the wait.
    private func runKey(startingWith first: WorkItem, _ pending: PendingExtension) async {
        var next = await runExtension(of: first, pending)
        while let item = next {
            next = await runSuccessor(item)
        }
    }

    /// Runs a record's extension and completes the record.
    /// - Returns: the next record of its key, if one waits.
    @inline(never)
    private func runExtension(of item: WorkItem, _ pending: PendingExtension) async -> WorkItem? {
        await complete(item, await pending.run())
    }

    /// Completes one record (``complete(_:)``).
    /// - Returns: the next record of its key, if one waits.
    @inline(never)
    private func complete(_ item: WorkItem, _ result: DispatchResult) async -> WorkItem? {
        await complete([Decided(item: item, result: result)]).first
    }

    /// Runs a record that waited behind another of its key.
    /// - Returns: the next record of its key, if one waits (a record's successors are of its
    ///   key, so there is at most one).
    @inline(never)
    private func runSuccessor(_ item: WorkItem) async -> WorkItem? {
        switch prepare(item) {
        case .decided(let result): await complete(item, result)
        case .extensionNeeded(let pending): await runExtension(of: item, pending)
        }
    }

    /// A record and its decision.
    private struct Decided {
        var item: WorkItem
        var result: DispatchResult
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

    /// Produces the outputs of decided records and, once the broker acknowledged them, marks the
    /// records done.
    ///
    /// - Returns: the records that waited behind these for their keys and may start now; empty
    ///   when the task was cancelled before the acknowledgements (those records are then not
    ///   done and their offsets never committed).
    @inline(never)
    private func complete(_ decided: [Decided]) async -> [WorkItem] {
        guard !decided.isEmpty else { return [] }
        // Results of partitions that left this worker meanwhile are dropped: their new owner
        // processes the records again.
        let isCurrent = state.withLock { state in decided.map { state.isCurrent($0.item) } }
        let staleCount = isCurrent.count { !$0 }
        if staleCount > 0 {
            counters.withLock { $0.staleResults += staleCount }
        }
        let current = decided.indices.filter { isCurrent[$0] }
        // The outputs (an extension's content among them) are held until acknowledged: flow
        // control counts them beside the records they came from.
        let outputBytes = current.reduce(0) { total, index in
            decided[index].result.outputs.reduce(total) { $0 + OutputLimit.size(of: $1) }
        }
        applyFlow(state.withLock { $0.holding(bytes: outputBytes) }.map { [$0] } ?? [])
        let written = await publisher.publish(current.map { decided[$0].result }, of: current.map { decided[$0].item.message })
        applyFlow(state.withLock { $0.releasing(bytes: outputBytes) }.map { [$0] } ?? [])
        // A record given up (cancelled, or the producer failed) is not done: it is not finished,
        // so its offset is never committed. Stale records are done without outputs.
        var done = decided.indices.filter { !isCurrent[$0] }.map { decided[$0].item }
        var ended: [(result: DispatchResult, timestamp: Date?)] = []
        for (index, result) in zip(current, written) {
            guard let result else { continue }
            done.append(decided[index].item)
            ended.append((result, decided[index].item.message.timestamp))
        }
        counters.withLock { counters in
            for entry in ended { counters.count(entry.result) }
        }
        if let metrics {
            for entry in ended { metrics.completed(entry.result, recordTimestamp: entry.timestamp) }
        }
        return finish(done)
    }

    /// Marks records done: their offsets may be committed and their keys' next records start.
    /// - Returns: the next records of their keys.
    private func finish(_ items: [WorkItem]) -> [WorkItem] {
        let (next, actions) = state.withLock { state in
            var next: [WorkItem] = []
            var actions: [FlowControl.Action] = []
            for item in items {
                let (successor, action) = state.finish(item)
                if let successor { next.append(successor) }
                if let action { actions.append(action) }
            }
            return (next, actions)
        }
        if let metrics {
            for item in items { metrics.finished(item.message) }
        }
        // Finishing records is progress too: while flow control holds the intake, no event
        // reaches the loop, and liveness must not fail a worker that is draining its work.
        health?.loopRan()
        applyFlow(actions)
        progress.notify()
        return next
    }

    // MARK: Flow control

    /// Holds or restarts the consumer's intake as flow control decided.
    ///
    /// The intake is held rather than the partitions paused: librdkafka keeps what it prefetched
    /// and takes up again at once, where a resumed partition fetches again only after about half a
    /// second (``KafkaConsumer/holdIntake(_:)``), a stall per pause that capped the worker at
    /// about 15,000 records per second.
    private func applyFlow(_ actions: [FlowControl.Action]) {
        guard !actions.isEmpty else { return }
        // Decisions are made under the state lock but applied here, after it: re-read the wanted
        // state under the second lock so a hold and a restart decided close together cannot be
        // applied in the wrong order.
        intakeHeld.withLock { held in
            let wanted = state.withLock { $0.isPaused }
            guard wanted != held else { return }
            consumer.holdIntake(wanted)
            logger.debug(wanted ? "intake held" : "intake restarted", metadata: [LogKey.inFlight: "\(state.withLock { $0.inFlight })"])
            held = wanted
        }
    }

    // MARK: Commits, revocation, shutdown

    private func commitPeriodically() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: settings.commitInterval)
            await commit()
            reportStalls()
        }
    }

    /// Reports partitions whose oldest record in flight is older than the stall limit (their
    /// commit cannot have moved for that long) to health and metrics.
    private func reportStalls() {
        guard let metrics else { return }
        let stalled = metrics.checkStalls(stalledAfter: settings.stalledPartitionLimit, overdueAfter: settings.drainLimit)
        health?.partitionsStalled(stalled.map { "\($0.topic)[\($0.partition)]" })
    }

    /// Commits every partition (or the given ones) up to its lowest offset not done.
    private func commit(_ subset: Set<TopicPartition>? = nil) async {
        let plan = state.withLock { $0.commitPlan(for: subset) }
        guard !plan.isEmpty else { return }
        do {
            try await consumer.commit(plan)
            state.withLock { $0.committed(plan) }
            counters.withLock { $0.commits += 1 }
        } catch {
            counters.withLock { $0.commitFailures += 1 }
            logger.warning("commit failed", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// Finishes the work of revoked partitions, commits it, then lets the partitions go: those
    /// that still have the assignment epoch they were revoked in (one lost and assigned again
    /// meanwhile is a new assignment, not this revocation's to release).
    private func completeRevocation(of epochs: [TopicPartition: UInt64]) async {
        let partitions = Array(epochs.keys)
        logger.info("partitions revoked", metadata: [LogKey.partitions: "\(describe(partitions))"])
        let subset = Set(partitions)
        let drained = await waitUntilDrained(subset)
        if !drained {
            logger.warning(
                "revoked partitions still had records in flight at the drain limit; their new owner processes them again",
                metadata: [LogKey.partitions: "\(describe(partitions))"]
            )
        }
        await commit(subset)
        let (actions, removed) = state.withLock { $0.remove(revoked: epochs) }
        metrics?.forget(removed)
        counters.withLock { $0.rebalances += 1 }
        applyFlow(actions)
        consumer.releaseRevoked(removed)
    }

    private func beginShutdown() {
        state.withLock { $0.beginShutdown() }
        // Commit results arrive through polling: a held intake would hold the shutdown's commit.
        // Records taken from now on are dropped uncommitted, so nothing new enters flight.
        intakeHeld.withLock { held in
            consumer.holdIntake(false)
            held = false
        }
        health?.shutdownBegan()
        shutdownRequested.notify()
        progress.notify()
    }

    /// Waits for graceful shutdown, then: records in flight finish (up to the drain limit), the
    /// work is committed, outputs are flushed, and the consumer leaves the group (which ends the
    /// event loop).
    private func shutDownWhenRequested() async {
        let generation = shutdownRequested.generation
        if !state.withLock({ $0.isShuttingDown }) {
            await shutdownRequested.wait(after: generation)
        }
        guard !Task.isCancelled else { return }
        if failure.error == nil {
            logger.info("shutting down: finishing records in flight", metadata: [LogKey.inFlight: "\(statistics.inFlight)"])
            if await !waitUntilDrained(nil) {
                logger.warning("records still in flight at the drain limit are left uncommitted")
            }
        }
        await commit()
        do {
            try await producer.flush(timeout: .seconds(10))
        } catch {
            logger.error("flush at shutdown failed", metadata: [LogKey.error: "\(error)"])
        }
        await consumer.close()
    }

    /// Marks the producer connected once a broker answered it; retries until then (or cancellation).
    private func reportProducerConnection(to health: WorkerHealth) async {
        while !Task.isCancelled {
            do {
                try await producer.checkConnection(timeout: .seconds(5))
                health.producerConnected()
                return
            } catch {
                logger.warning("the producer cannot reach the cluster yet", metadata: [LogKey.error: "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Waits until the partitions (all when `nil`) have nothing in flight, at most the drain limit.
    private func waitUntilDrained(_ subset: Set<TopicPartition>?) async -> Bool {
        await wait(for: { self.state.withLock { $0.isDrained(subset) } }, signal: progress, limit: settings.drainLimit)
    }

    /// Waits until `condition` holds, re-checking it whenever `signal` is notified, at most `limit`.
    /// - Returns: whether the condition held in time.
    private func wait(
        for condition: @escaping @Sendable () -> Bool,
        signal: CompletionSignal,
        limit: Duration
    ) async -> Bool {
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

    // MARK: App states

    /// Starts reading the app-states topic from its beginning into the table, in `group`.
    /// - Returns: a signal notified when the table has caught up with the topic; the worker waits
    ///   for it before taking requests, so the first ones are decided with every state known.
    private func startAppStates(topic: String, in group: inout DiscardingTaskGroup) throws -> CompletionSignal {
        let reader = try KafkaTopicReader(configuration: settings.consumer, topic: topic, logger: logger)
        let caughtUp = CompletionSignal()
        group.addTask {
            await withTaskCancellationHandler {
                for await event in reader.events {
                    switch event {
                    case .messages(let messages):
                        self.applyAppStates(messages, topic: topic)
                    case .caughtUp:
                        self.logger.info(
                            "app-states table loaded",
                            metadata: [LogKey.topic: "\(topic)", "devices": "\(self.appStates.count)"]
                        )
                        caughtUp.notify()
                    case .error(let error):
                        self.logger.warning("app-states reader error", metadata: [LogKey.error: "\(error)"])
                    }
                }
            } onCancel: {
                // Closing ends `reader.events`, which ends the loop above. The close must be
                // awaited and a cancellation handler cannot await: hence the unstructured task.
                Task { await reader.close() }
            }
        }
        return caughtUp
    }

    private func applyAppStates(_ messages: [KafkaMessage], topic: String) {
        for message in messages {
            guard case .invalid(let problem) = appStates.apply(key: message.key, value: message.value) else { continue }
            logger.warning(
                "app-state record ignored",
                metadata: [
                    LogKey.topic: "\(topic)",
                    LogKey.partition: "\(message.partition)",
                    LogKey.offset: "\(message.offset)",
                    LogKey.error: "\(problem)",
                ]
            )
        }
    }
}

private func describe(_ partitions: [TopicPartition]) -> String {
    partitions.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
        .map { "\($0.topic)[\($0.partition)]" }
        .joined(separator: ",")
}
