public import Dispatcher
import Foundation
public import Kafka

/// What one worker needs to know to run: where Kafka is, what to read and how hard to push.
///
/// Built from the product's configuration (`kafka`, `topics` and `dispatch` sections) by
/// ``WorkerSettings/init(configuration:)``; tests and benchmarks build it directly.
public struct WorkerSettings: Sendable {
    /// The consumer of the requests and responses topics (group, bootstrap, librdkafka properties).
    public var consumer: ConsumerConfiguration
    /// The producer of deliveries, launches and dead letters.
    public var producer: ProducerConfiguration
    /// The requests topic the group consumes.
    public var requestsTopic: String
    /// The responses topic the group consumes beside it (SEMANTICS section 10); `nil`: none.
    public var responsesTopic: String?
    /// The topics the worker writes, checked at start: it refuses to run when one is unknown or
    /// not authorised, rather than turn every request into a dead letter. Empty: not checked.
    public var outputTopics: [String] = []
    /// How long a retriable produce failure is retried before the request becomes an
    /// `OutputRejected` dead letter (`dispatch.outputRetryLimit`).
    public var outputRetryLimit: Duration = .seconds(300)
    /// How long a partition with records in flight may go without its committed offset moving
    /// before readiness fails (`dispatch.stalledPartitionLimit`).
    public var stalledPartitionLimit: Duration = .seconds(600)
    /// The compacted app-states topic, read whole by every worker; `nil` when not configured.
    public var appStatesTopic: String?
    /// The compacted devices topic (SEMANTICS section 11.2), read whole by every worker when it
    /// exists; `nil` when not configured.
    public var devicesTopic: String?
    /// `dispatch.tooManyRequests` (section 12.3); nil: no limit, nothing counted.
    public var tooManyRequests: RequestRateLimit?
    /// How records are ordered.
    public var ordering: OrderingMode = .key
    /// At-least-once (the consumer commits offsets) or exactly-once (outputs and offsets in one
    /// transaction of ``producer``, which then needs a ``ProducerConfiguration/transactionalID``;
    /// docs/worker.md, "Exactly-once").
    public var guarantee: DeliveryGuarantee = .atLeastOnce
    /// Records in flight at which fetching pauses (`dispatch.maxInFlight`).
    public var maxInFlight: Int = 10_000
    /// Bytes of records in flight at which fetching pauses.
    public var maxBufferedBytes: Int = 64 << 20
    /// The fraction of both limits below which fetching resumes.
    public var resumeRatio: Double = 0.5
    /// How often finished offsets are committed.
    public var commitInterval: Duration = .seconds(1)
    /// How long revocation and shutdown wait for records in flight: a record's deadline plus
    /// expiry grace, plus a margin for producing its outputs.
    public var drainLimit: Duration = .seconds(37)

    /// The topics the group consumes: requests, then responses when configured.
    public var consumedTopics: [String] { [requestsTopic] + (responsesTopic.map { [$0] } ?? []) }

    /// The consumer as the worker runs it: ``consumer`` with batches of at most a twentieth of
    /// ``maxInFlight``. The intake runs past the limit by at most two consumed batches (the one
    /// that reached it and the one handed over meanwhile), so in flight stays within 110 % of it.
    public var effectiveConsumer: ConsumerConfiguration {
        var effective = consumer
        effective.maxBatchSize = min(consumer.maxBatchSize, max(1, maxInFlight / 20))
        return effective
    }

    /// Creates settings from their parts; the rest keeps its defaults.
    public init(
        consumer: ConsumerConfiguration,
        producer: ProducerConfiguration,
        requestsTopic: String,
        appStatesTopic: String? = nil
    ) {
        self.consumer = consumer
        self.producer = producer
        self.requestsTopic = requestsTopic
        self.appStatesTopic = appStatesTopic
    }
}

extension WorkerSettings {
    /// Settings from the product's configuration: `kafka` (bootstrap, group, librdkafka properties
    /// for both clients), `topics` and `dispatch`.
    ///
    /// The drain limit is the longest deadline any app or category may have, plus the expiry
    /// grace, plus `margin` for producing the outputs: a record in flight always gets its full
    /// time before revocation or shutdown gives up on it.
    public init(configuration: Configuration, margin: Duration = .seconds(5)) {
        var consumer = ConsumerConfiguration(
            bootstrapServers: configuration.kafka.bootstrapServers,
            groupID: configuration.kafka.groupId
        )
        consumer.properties = configuration.kafka.properties
        var producer = ProducerConfiguration(bootstrapServers: configuration.kafka.bootstrapServers)
        producer.properties = configuration.kafka.properties
        producer.maxMessageBytes = configuration.kafka.maxMessageBytes
        // The output topics are checked at start: a misspelt one is refused, not created.
        producer.createsTopics = false
        self.init(
            consumer: consumer,
            producer: producer,
            requestsTopic: configuration.topics.requests,
            appStatesTopic: configuration.topics.appStates
        )
        responsesTopic = configuration.topics.responses
        devicesTopic = configuration.topics.devices
        tooManyRequests = configuration.dispatch.tooManyRequests
        let dispatch = configuration.dispatch
        ordering = dispatch.ordering
        guarantee = dispatch.guarantee
        maxInFlight = dispatch.maxInFlight
        maxBufferedBytes = dispatch.maxBufferedBytes
        resumeRatio = dispatch.resumeRatio
        commitInterval = dispatch.commitInterval
        outputRetryLimit = dispatch.outputRetryLimit
        stalledPartitionLimit = dispatch.stalledPartitionLimit
        let topics = configuration.topics
        outputTopics = [topics.deliveries, topics.launches, topics.deadLetter, topics.actions, topics.feedback]
        drainLimit = configuration.longestDeadline + dispatch.expiryGrace + margin
        if guarantee == .exactlyOnce {
            self.producer.transactionalID = Self.transactionalID(
                group: configuration.kafka.groupId, worker: configuration.metrics.workerId)
            // A transaction stays open for a commit interval plus, at worst, the drain of the
            // records in flight: the coordinator must not abort it before (and librdkafka's
            // delivery timeout must not exceed it).
            self.producer.transactionTimeout = max(
                .seconds(60), drainLimit + dispatch.commitInterval + self.producer.deliveryTimeout)
        }
    }

    /// The transactional id of an exactly-once worker: `<group>.<worker>`, the worker being
    /// `metrics.workerId` or, unset, the host name. It must be the same across the worker's
    /// restarts (a restart then fences its previous incarnation at once and aborts what it left
    /// open) and differ between workers running at once (two with one id fence each other): a
    /// StatefulSet's pod names are both; several workers on one host need a `metrics.workerId` each.
    public static func transactionalID(group: String, worker: String?) -> String {
        let name = worker.flatMap { $0.isEmpty ? nil : $0 } ?? ProcessInfo.processInfo.hostName
        return "\(group).\(name)"
    }
}
