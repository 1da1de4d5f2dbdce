import BlockingWork
public import Logging
import Synchronization

/// A Kafka producer: `send` enqueues a record and suspends until its delivery report.
///
/// Idempotent by default (`enable.idempotence=true`, `acks=all`). A dedicated poll thread serves
/// delivery reports continuously. When librdkafka's local queue is full, `send` waits for room and
/// retries instead of failing. Every `send` resumes exactly once: with the report, or with the
/// report's error (records still queued at ``shutdown(flushTimeout:)`` fail as purged).
///
/// - Important: Call ``shutdown(flushTimeout:)`` before dropping the producer to deliver what is queued.
public final class KafkaProducer: Sendable {
    /// State shared with the poll thread.
    let core: ProducerCore
    /// The callbacks' context, which keeps the first fatal error.
    let context: ProducerContext

    /// Creates the producer and starts its poll thread.
    ///
    /// - Parameter onFatalError: told once, on the producer's poll thread, of the first fatal error
    ///   (after which every produce fails): the owner should stop, since only a new producer
    ///   recovers. It must not block.
    /// - Throws: ``KafkaError`` when librdkafka rejects a property.
    public init(
        configuration: ProducerConfiguration,
        logger: Logger,
        onFatalError: @escaping @Sendable (KafkaError) -> Void = { _ in }
    ) throws(KafkaError) {
        let config = RDKafkaConfig()
        for (name, value) in configuration.librdkafkaProperties {
            try config.set(name, value)
        }
        config.routeDeliveryReports()
        config.routeProducerErrors()
        let context = ProducerContext(logger: logger, onFatalError: onFatalError)
        self.context = context
        let client = try RDKafkaClient(.producer, config: config, context: context)
        let core = ProducerCore(client: client, logger: logger)
        self.core = core
        BlockingWork.startThread(named: "kafka-producer-poll") { core.runPollThread() }
    }

    deinit {
        // Without a shutdown call, still stop the poll thread (it frees the handle) after a short flush.
        core.requestStop(flushMilliseconds: 5_000, waiter: nil)
    }

    /// Enqueues the record and suspends until its delivery report; throws the report's error.
    ///
    /// A full local queue is not an error: `send` waits until the poll thread has served delivery
    /// reports and tries again.
    public func send(_ record: ProducerRecord) async throws(KafkaError) -> DeliveryReport {
        try await send([record])[0].get()
    }

    /// Enqueues `records` in order and suspends once until every one has its delivery report.
    ///
    /// Cheaper per record than one ``send(_:)-(ProducerRecord)`` each (one suspension for the batch);
    /// records with the same key keep their order. A full local queue makes it wait and go on.
    /// - Returns: One result per record, in order.
    public func send(_ records: [ProducerRecord]) async -> [Result<DeliveryReport, KafkaError>] {
        guard !records.isEmpty else { return [] }
        let batch = context.deliveries.open(count: records.count)
        var index = 0
        while index < records.count {
            let enqueued = core.enqueue(records, from: index, opaque: batch.messageOpaque)
            for (refused, error) in enqueued.rejected { batch.complete(refused, .rejected(error)) }
            index = enqueued.next
            if enqueued.queueFull { await core.waitForQueueSpace() }
        }
        await batch.waitForAll()
        return batch.results(topics: records)
    }

    /// Waits until every record enqueued so far has its delivery report, or `timeout` passes.
    ///
    /// Runs on the producer's poll thread, never on the cooperative pool.
    /// - Throws: ``KafkaError`` `_TIMED_OUT` when records are still outstanding after `timeout`.
    public func flush(timeout: Duration) async throws(KafkaError) {
        try await core.flush(milliseconds: timeout.clampedMilliseconds).get()
    }

    /// Asks the cluster for its brokers (a metadata request on a thread of its own, never the
    /// cooperative pool): returns once a broker answered, so the producer can reach the cluster.
    ///
    /// - Throws: ``KafkaError`` when no broker answered within `timeout`, or after shutdown.
    public func checkConnection(timeout: Duration) async throws(KafkaError) {
        guard let client = core.state.withLock({ $0.client }) else { throw KafkaError.shutDown("checkConnection") }
        let milliseconds = timeout.clampedMilliseconds
        let result: Result<Void, KafkaError> = await BlockingWork.run(onThreadNamed: "kafka-producer-metadata") {
            client.checkBrokers(milliseconds: milliseconds)
        }
        try result.get()
    }

    /// The first fatal error, once one happened: every produce fails from then on.
    public var fatalError: KafkaError? {
        context.fatalError.withLock { $0 }
    }

    /// Checks that each topic exists and this client may see it, from one metadata request for
    /// all topics (``clusterTopics(timeout:)``; it creates no topic).
    ///
    /// - Throws: ``KafkaError`` `UNKNOWN_TOPIC_OR_PART` naming the topics the cluster does not
    ///   know or does not let this client see, or the failure to ask within `timeout`.
    public func checkTopics(_ topics: [String], timeout: Duration) async throws(KafkaError) {
        try await clusterTopics(timeout: timeout).requireKnown(topics)
    }

    /// Every topic the cluster lets this client see, with its partition count, from one metadata
    /// request for all topics (on a thread of its own, never the cooperative pool). Asking for all
    /// topics, rather than for the ones wanted, never creates a topic on a cluster that creates
    /// the topics it is asked about.
    ///
    /// - Throws: ``KafkaError``: the failure to ask within `timeout`, or after shutdown.
    public func clusterTopics(timeout: Duration) async throws(KafkaError) -> ClusterTopics {
        guard let client = core.state.withLock({ $0.client }) else { throw KafkaError.shutDown("clusterTopics") }
        let milliseconds = timeout.clampedMilliseconds
        let result: Result<[String: Int32], KafkaError> = await BlockingWork.run(onThreadNamed: "kafka-producer-metadata") {
            client.partitionCounts(milliseconds: milliseconds)
        }
        return ClusterTopics(partitionCounts: try result.get())
    }

    /// Raises a fatal error in librdkafka as a broker would (`rd_kafka_test_fatal_error`), for
    /// tests of what the owner does then. Requires idempotence.
    package func raiseFatalErrorForTesting(reason: String) {
        guard let client = core.state.withLock({ $0.client }) else { return }
        client.raiseFatalErrorForTesting(reason: reason)
    }

    /// Records enqueued but not yet reported, plus reports not yet served (`rd_kafka_outq_len`); 0 after shutdown.
    public var queuedCount: Int {
        guard let client = core.state.withLock({ $0.client }) else { return 0 }
        return client.queueLength
    }

    /// Stops taking records, flushes for at most `flushTimeout`, fails what is left as purged,
    /// stops the poll thread and destroys the handle.
    public func shutdown(flushTimeout: Duration = .seconds(30)) async {
        await withCheckedContinuation { continuation in
            core.requestStop(flushMilliseconds: flushTimeout.clampedMilliseconds, waiter: continuation)
        }
    }
}
