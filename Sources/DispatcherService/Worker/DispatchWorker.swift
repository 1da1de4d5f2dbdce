public import Dispatcher
import Foundation
import Kafka
public import Logging
import Notifications
import Records
public import ServiceLifecycle
import Synchronization

/// One member of the consumer group: consumes requests and responses, dispatches them (requests
/// under their deadlines), produces their outputs and commits only what is done (docs/worker.md).
///
/// What the worker knows is one value, ``WorkerCore``, behind one lock; its transitions return
/// effects, which this service carries out. The service is split by what it does:
/// - this file: the clients, and the event loop that hands each consumer event to its part;
/// - `+Intake`: taking records in, assignments, and carrying out effects (the intake's hold);
/// - `+Produce`: deciding records, running extensions, producing outputs, finishing records;
/// - `+Commit`: periodic commits and stall reports;
/// - `+Revocation`: revoked and lost partitions;
/// - `+Restore`: what runs before each assignment takes effect (the earlier assignment closed,
///   the state restored, or the partitions held);
/// - `+Shutdown`: graceful shutdown, stopping on a fatal failure, waiting for drains;
/// - `+AppStates`: the readers of the tables every worker reads whole (app states, channels, the
///   activity index); `PartitionedState` keeps what it owns by partition;
/// - `+Transaction`: exactly-once mode's transaction commits.
public final class DispatchWorker: Service, Sendable {
    let settings: WorkerSettings
    let dispatcher: Dispatcher
    let appStates: AppStatesTable
    /// The state of sections 11.2 and 14 to 16, owned by partition (nil: kept by no one, every
    /// token passes the token checks and activities exist only as output records).
    let state: PartitionedState?
    /// What the rules read: the app states, the partitioned state and the request counts of
    /// `dispatch.tooManyRequests`.
    package let tables: StateTables
    let consumer: KafkaConsumer
    /// Internal, not private: tests raise a fatal error through it.
    let producer: KafkaProducer
    let logger: Logger
    /// Metrics and health hooks (nil: not observed, as in benchmarks and the demo).
    let metrics: WorkerMetrics?
    let health: WorkerHealth?

    /// Writes the outputs of decided records.
    let publisher: OutputPublisher
    /// The first failure that stops the worker for good.
    let failure = WorkerFailure()

    /// Everything the worker knows.
    let core: Mutex<WorkerCore>
    /// Applies the core's intake decisions to the consumer, in the order they were made.
    let intake: IntakeSwitch
    /// The decided results of service extensions, as they end (``publishExtensionResults()``).
    let extensionResults = ResultInbox<Decided>()
    /// Notified whenever records finish or partitions leave: drain waits listen to it.
    let progress = CompletionSignal()
    /// Notified once, when graceful shutdown begins.
    let shutdownRequested = CompletionSignal()
    /// Whether outputs and offsets go in transactions (`dispatch.guarantee: exactly-once`).
    let isTransactional: Bool
    /// Exactly-once: runs transaction commits one at a time.
    let transactionTurns = TransactionTurns()
    /// Exactly-once: a transaction that cannot commit, to rewind, and the records refused in one.
    let recovery: TransactionRecovery
    /// Exactly-once: the worker's own commits, which the consumer starts a partition given back
    /// at the least (``CommittedFloor``).
    let committedFloor: CommittedFloor?
    /// What orders records after one another: the core's, read without its lock to make each
    /// record's key before the record is taken in.
    let orderingPolicy: OrderingPolicy
    /// The producer's handles on the topics records decided in place write to.
    let inPlaceTopics: InPlaceTopics?

    /// Creates the worker and its Kafka clients; nothing is consumed before ``run()``.
    ///
    /// - Throws: ``KafkaError`` when the linked librdkafka is older than
    ///   ``KafkaLibrary/minimumVersion`` or a client cannot be created (a bad librdkafka property).
    public init(
        settings: WorkerSettings,
        dispatcher: Dispatcher,
        appStates: AppStatesTable = AppStatesTable(),
        logger: Logger,
        metrics: WorkerMetrics? = nil,
        health: WorkerHealth? = nil
    ) throws {
        try KafkaLibrary.checkSupported()
        self.settings = settings
        self.metrics = metrics
        self.health = health
        self.dispatcher = dispatcher
        self.appStates = appStates
        let state = settings.state.map {
            PartitionedState(
                topics: $0, requestsTopic: settings.requestsTopic, consumer: settings.consumer, logger: logger,
                samplesRequestKeys: settings.samplesRequestKeys)
        }
        self.state = state
        let requestRates = settings.tooManyRequests.map(RequestRateWindow.init)
        self.tables =
            state?.tables(appStates: appStates, requestRates: requestRates)
            ?? StateTables(appStates: appStates, requestRates: requestRates)
        self.logger = logger
        let isTransactional = settings.guarantee == .exactlyOnce
        self.isTransactional = isTransactional
        if isTransactional, settings.producer.transactionalID == nil {
            throw WorkerStopped("dispatch.guarantee exactly-once needs a transactional id for the worker's producer")
        }
        if settings.state == nil, let app = dispatcher.configuration.apps.first(where: { $0.value.badgeLedger })?.key {
            // Without the partitioned state every count would start at 0 again on each request.
            throw WorkerStopped(
                "apps.\(app).badgeLedger needs the partitioned state the ledger lives in (section 21): set topics.devices (it is \"\")")
        }
        let flow = FlowControl(maxRecords: settings.maxInFlight, maxBytes: settings.maxBufferedBytes, resumeRatio: settings.resumeRatio)
        let sharedOrdering = settings.state.map { [$0.devices: settings.requestsTopic, $0.activityRepartition: settings.requestsTopic] } ?? [:]
        self.core = Mutex(WorkerCore(flow: flow, ordering: settings.ordering, sharedOrdering: sharedOrdering))
        self.orderingPolicy = OrderingPolicy(mode: settings.ordering, sharedOrdering: sharedOrdering)
        let failure = self.failure
        let producer = try KafkaProducer(configuration: settings.producer, logger: logger) { error in
            failure.record(error)
        }
        self.producer = producer
        self.inPlaceTopics = InPlaceTopics(producer: producer, topics: dispatcher.configuration.topics)
        // The restore before each assignment needs the whole worker, which does not exist yet.
        let reference = Reference()
        var beforeAssign: KafkaConsumer.BeforeAssign?
        if state != nil {
            beforeAssign = { partitions, committedOffsets in
                guard let worker = reference.worker else { return false }
                return worker.prepareAssignment(of: partitions, committedOffsets: committedOffsets)
            }
        }
        // Exactly-once: lost partitions stop the worker at once, even while its event loop waits
        // for a transaction's commit (which takes no record, and so no event, in meanwhile) whose
        // coordinator cannot be reached: the open transaction holds outputs of records the
        // partitions' new owner processes again, and must not commit.
        var onLost: KafkaConsumer.OnLost?
        if settings.guarantee == .exactlyOnce {
            onLost = { @Sendable partitions in
                failure.record(
                    Self.transactionalStop("partitions were lost (\(describe(partitions))): the group gave them to another member"))
            }
        }
        // Exactly-once: a partition given back starts no lower than this worker's own last commit
        // of it (a broker that holds transactional offsets back may answer older ones: Tansu).
        let committedFloor = isTransactional ? CommittedFloor() : nil
        self.committedFloor = committedFloor
        let consumer = try KafkaConsumer(
            configuration: settings.effectiveConsumer, logger: logger, beforeAssign: beforeAssign, onLost: onLost,
            committedFloor: committedFloor)
        self.consumer = consumer
        self.intake = IntakeSwitch(consumer: consumer, logger: logger)
        let recovery = TransactionRecovery()
        self.recovery = recovery
        // Exactly-once: a failed output leaves its transaction unable to commit; rather than retry
        // into it, the publisher gives its record up and asks for the transaction's rewind.
        self.publisher = OutputPublisher(
            producer: producer, dispatcher: dispatcher, retryLimit: settings.outputRetryLimit, logger: logger,
            metrics: metrics, onUnwritable: { reason in failure.record(WorkerStopped(reason)) },
            recovery: isTransactional ? recovery : nil)
        reference.set(self)
    }

    /// The worker's counters and gauges now.
    public var statistics: WorkerStatistics {
        let now = ContinuousClock.now
        var statistics = core.withLock { $0.statistics(at: now) }
        statistics.state = state?.gauges
        return statistics
    }

    /// Runs until graceful shutdown completes or the consumer fails for good.
    public func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                guard await start(in: &group) else { return }
                group.addTask { await self.commitPeriodically() }
                group.addTask { await self.publishExtensionResults() }
                // The start's metadata request answered already, unless there was nothing to check.
                if let health, !health.current.isProducerConnected { group.addTask { await self.reportProducerConnection(to: health) } }
                group.addTask { await self.shutDownWhenRequested() }
                group.addTask { await self.stopOnFailure() }
                if isTransactional { group.addTask { await self.rewindWhenAsked() } }

                // Every record decided in place is written into these buffers, in turn.
                var inPlace = OutputBuffer()
                for await event in consumer.events {
                    health?.loopRan()
                    switch event {
                    case .lent(let batch):
                        state?.sampleRequests(of: batch)
                        guard let work = await take(batch, output: &inPlace) else { continue }
                        if !work.records.isEmpty {
                            group.addTask {
                                let start = await self.completeInPlace(work)
                                if !start.isEmpty { await self.run(start) }
                            }
                        }
                        if !work.owned.isEmpty {
                            let owned = work.owned
                            group.addTask { await self.run(owned) }
                        }
                    case .messages(let messages):
                        state?.sampleRequests(of: messages)
                        let ready = isTransactional ? await takeBetweenCommits(messages) : take(messages)
                        if !ready.isEmpty { group.addTask { await self.run(ready) } }
                    case .assigned(let partitions):
                        let raisedStarts = assign(partitions)
                        if !raisedStarts.isEmpty { group.addTask { await self.commitRaisedStarts(raisedStarts) } }
                    case .revoked(let partitions):
                        let revocation = beginRevocation(of: partitions)
                        group.addTask { await self.completeRevocation(revocation) }
                    case .lost(let partitions):
                        lose(partitions)
                    case .statistics(let statistics):
                        core.withLock { $0.received(lag: statistics.consumerLag) }
                        metrics?.received(statistics)
                    case .error(let error):
                        if error.isFatal {
                            failure.record(error)
                        } else {
                            logger.warning("Kafka error", metadata: [LogKey.error: "\(error)"])
                        }
                    case .rewound(let partitions):
                        core.withLock { $0.rewound(partitions) }
                    case .caughtUp:
                        continue  // a topic reader's event: a group consumer never reports it
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

    /// Loads the app states (when configured), checks the output topics and subscribes.
    /// - Returns: whether the worker started; when not, the failure is recorded and the consumer closed.
    private func start(in group: inout DiscardingTaskGroup) async -> Bool {
        do {
            if let topic = settings.appStatesTopic {
                let caughtUp = try startAppStates(topic: topic, in: &group)
                let loaded = await wait(for: { caughtUp.generation > 0 }, signal: caughtUp, limit: .seconds(30))
                if !loaded {
                    logger.warning("app-states table not loaded after 30 s; starting anyway", metadata: [LogKey.topic: "\(topic)"])
                }
            }
            try await checkTopics()
            if let state { try await startWholeTables(of: state, in: &group) }
            if isTransactional { try await startTransactions() }
            try consumer.subscribe(topics: settings.consumedTopics)
        } catch {
            logger.critical("cannot start the worker", metadata: [LogKey.error: "\(error)"])
            failure.record(error)
            group.cancelAll()
            await consumer.close()
            return false
        }
        logger.info(
            "worker started",
            metadata: [
                LogKey.topic: "\(settings.consumedTopics.joined(separator: ","))",
                LogKey.group: "\(settings.consumer.groupID)",
                LogKey.ordering: "\(settings.ordering.rawValue)",
                LogKey.guarantee: "\(settings.guarantee.rawValue)",
            ]
        )
        return true
    }

    /// Refuses to start when an output topic is unknown or not authorised (every request would
    /// otherwise become a dead letter, or, for the dead-letter topic, none could be written), or
    /// unless the state topics exist, co-partitioned with the requests topic
    /// (``PartitionedState/check(partitionCounts:partitioner:)``). One metadata request answers
    /// both checks, and shows that the producer reaches the cluster (health need not ask again).
    /// A cluster not reachable yet is waited for, until shutdown.
    private func checkTopics() async throws {
        guard !settings.outputTopics.isEmpty || state != nil else { return }
        while !core.withLock({ $0.isShuttingDown }) {
            let topics: ClusterTopics
            do {
                topics = try await producer.clusterTopics(timeout: .seconds(5))
            } catch where error.produceFailure == .permanent && !settings.outputTopics.isEmpty {
                throw WorkerStopped("an output topic cannot be used: \(error)")
            } catch {
                let checked = settings.outputTopics.isEmpty ? "state" : "output"
                logger.warning("cannot check the \(checked) topics yet", metadata: [LogKey.error: "\(error)"])
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            health?.producerConnected()
            do {
                try topics.requireKnown(settings.outputTopics)
            } catch {
                throw WorkerStopped("an output topic cannot be used: \(error)")
            }
            do {
                try state?.check(partitionCounts: topics.partitionCounts, partitioner: settings.producer.partitioner)
            } catch {
                throw WorkerStopped("\(error)")
            }
            return
        }
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
}

/// Partitions for a log line, in topic and partition order: `topic[0],topic[3]`.
func describe(_ partitions: some Collection<TopicPartition>) -> String {
    partitions.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
        .map { "\($0.topic)[\($0.partition)]" }
        .joined(separator: ",")
}
