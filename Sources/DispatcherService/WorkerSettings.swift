public import Dispatcher
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
    /// How records are ordered.
    public var ordering: OrderingMode = .key
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
        // librdkafka defaults the worker changes (LibrdkafkaDefaults), under kafka.properties.
        consumer.properties = LibrdkafkaDefaults.applying(configuration.kafka.properties)
        var producer = ProducerConfiguration(bootstrapServers: configuration.kafka.bootstrapServers)
        producer.properties = LibrdkafkaDefaults.applying(configuration.kafka.properties)
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
        let dispatch = configuration.dispatch
        ordering = dispatch.ordering
        maxInFlight = dispatch.maxInFlight
        maxBufferedBytes = dispatch.maxBufferedBytes
        resumeRatio = dispatch.resumeRatio
        commitInterval = dispatch.commitInterval
        outputRetryLimit = dispatch.outputRetryLimit
        stalledPartitionLimit = dispatch.stalledPartitionLimit
        let topics = configuration.topics
        outputTopics = [topics.deliveries, topics.launches, topics.deadLetter, topics.actions]
        drainLimit = configuration.longestDeadline + dispatch.expiryGrace + margin
    }
}
