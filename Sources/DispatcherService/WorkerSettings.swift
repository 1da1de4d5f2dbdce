public import Dispatcher
import Foundation
public import Kafka

/// What one worker needs to know to run: where Kafka is, what to read and how hard to push.
///
/// Built from the product's configuration (`kafka`, `topics` and `dispatch` sections) by
/// ``WorkerSettings/init(configuration:)``; tests and benchmarks build it directly.
public struct WorkerSettings: Sendable {
    /// The `dispatch` section's defaults: the settings below that it also holds start from them,
    /// so each default is written once, in ``DispatchSettings``.
    private static let defaults = DispatchSettings()

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
    public var outputRetryLimit = Self.defaults.outputRetryLimit
    /// How long a partition with records in flight may go without its committed offset moving
    /// before readiness fails (`dispatch.stalledPartitionLimit`).
    public var stalledPartitionLimit = Self.defaults.stalledPartitionLimit
    /// How long the restore of newly assigned partitions' state may take, retries included,
    /// before the worker holds them and stops (`dispatch.restoreLimit`).
    public var restoreLimit = Self.defaults.restoreLimit
    /// The compacted app-states topic, read whole by every worker; `nil` when not configured.
    public var appStatesTopic: String?
    /// The state of SEMANTICS sections 11.2 and 14 to 16 the worker keeps by partition
    /// (docs/worker.md, "Partitioned state"); nil: none (a deployment with `topics.devices: ""`,
    /// benchmarks of the stateless path). Set, the group uses the `range` assignor and the worker
    /// refuses to start unless its topics exist, co-partitioned with the requests topic.
    public var state: StateSettings?
    /// Whether the worker samples the requests topic's keys to learn which partitioner their
    /// producers use, and warns when it is not its own (docs/worker.md, "Partitioned state").
    /// `dev` turns it off: it writes its samples to one chosen partition.
    public var samplesRequestKeys = true
    /// `dispatch.tooManyRequests` (section 12.3); nil: no limit, nothing counted.
    public var tooManyRequests: RequestRateLimit?
    /// How records are ordered.
    public var ordering = Self.defaults.ordering
    /// At-least-once (the consumer commits offsets) or exactly-once (outputs and offsets in one
    /// transaction of ``producer``, which then needs a ``ProducerConfiguration/transactionalID``;
    /// docs/worker.md, "Exactly-once").
    public var guarantee = Self.defaults.guarantee
    /// Records in flight at which fetching pauses (`dispatch.maxInFlight`).
    public var maxInFlight = Self.defaults.maxInFlight
    /// Bytes of records in flight at which fetching pauses.
    public var maxBufferedBytes = Self.defaults.maxBufferedBytes
    /// The fraction of both limits below which fetching resumes.
    public var resumeRatio = Self.defaults.resumeRatio
    /// How often finished offsets are committed.
    public var commitInterval = Self.defaults.commitInterval
    /// How long revocation and shutdown wait for records in flight: a record's deadline plus
    /// expiry grace, plus a margin for producing its outputs.
    public var drainLimit = Self.drainLimit(for: Configuration(), margin: Self.drainMargin)

    /// The drain limit's margin for producing a record's outputs after its deadline and grace.
    public static let drainMargin: Duration = .seconds(5)

    /// The drain limit of `configuration`: its longest deadline plus its expiry grace plus `margin`.
    static func drainLimit(for configuration: Configuration, margin: Duration) -> Duration {
        configuration.longestDeadline + configuration.dispatch.expiryGrace + margin
    }

    /// The topics the group consumes: requests, then responses when configured, then with
    /// partitioned state the devices and activity-repartition topics, and the badges topic when
    /// an app keeps a badge ledger.
    package var consumedTopics: [String] {
        [requestsTopic] + (responsesTopic.map { [$0] } ?? [])
            + (state.map { [$0.devices, $0.activityRepartition] + ($0.badges.map { [$0] } ?? []) } ?? [])
    }

    /// The consumer as the worker runs it: ``consumer`` with batches of at most a twentieth of
    /// ``maxInFlight``. The intake runs past the limit by at most two consumed batches (the one
    /// that reached it and the one handed over meanwhile), so in flight stays within 110 % of it.
    package var effectiveConsumer: ConsumerConfiguration {
        var effective = consumer
        if state != nil { effective.assignor = .range }
        effective.maxBatchSize = min(consumer.maxBatchSize, max(1, maxInFlight / 20))
        // Records that wait for nothing are decided where librdkafka keeps them.
        effective.lendsMessages = true
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
    /// The topics and limits of the partitioned state (docs/worker.md, "Partitioned state").
    public struct StateSettings: Sendable {
        /// The devices table's topic (section 11.2): consumed by the group, co-partitioned.
        public var devices: String
        /// The channels table's topic (section 15): read whole by every worker.
        public var channels: String
        /// The activities changelog (section 14.6): co-partitioned, restored by partition, and read
        /// whole by every worker as the index of channel subscriptions.
        public var activities: String
        /// The stored-notifications changelog (section 16): co-partitioned, restored by partition.
        public var stored: String
        /// The internal topic of Live Activity commands (``TopicSettings/activityRepartition``):
        /// consumed by the group, co-partitioned.
        public var activityRepartition: String
        /// The badge ledger's topic (section 21), when an app keeps a ledger: co-partitioned,
        /// restored by partition, then consumed by the group for the counts providers reset.
        /// nil: no app keeps one, and the topic is neither needed nor read.
        public var badges: String?
        /// The most activities, stored notifications and badge counts one worker keeps.
        public var limits: StateLimits

        /// Settings of these topics and limits.
        public init(
            devices: String, channels: String, activities: String, stored: String, activityRepartition: String,
            badges: String? = nil, limits: StateLimits = StateLimits()
        ) {
            self.devices = devices
            self.channels = channels
            self.activities = activities
            self.stored = stored
            self.activityRepartition = activityRepartition
            self.badges = badges
            self.limits = limits
        }

        /// The topics that must have as many partitions as the requests topic.
        package var coPartitioned: [String] { [devices, activityRepartition, activities, stored] + (badges.map { [$0] } ?? []) }
    }

    /// Settings from the product's configuration: `kafka` (bootstrap, group, librdkafka properties
    /// for both clients), `topics` and `dispatch`.
    ///
    /// The drain limit is the longest deadline any app or category may have, plus the expiry
    /// grace, plus `margin` for producing the outputs: a record in flight always gets its full
    /// time before revocation or shutdown gives up on it.
    public init(configuration: Configuration, margin: Duration = Self.drainMargin) {
        var consumer = ConsumerConfiguration(
            bootstrapServers: configuration.kafka.bootstrapServers,
            groupID: configuration.kafka.groupId
        )
        consumer.properties = configuration.kafka.properties
        var producer = ProducerConfiguration(bootstrapServers: configuration.kafka.bootstrapServers)
        producer.properties = configuration.kafka.properties
        // The partitioner librdkafka applies is the property's (set after the typed one): the
        // worker places keys (its state's owners) by the same one.
        if let partitioner = configuration.kafka.properties["partitioner"] { producer.partitioner = partitioner }
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
        let topics = configuration.topics
        // The devices table is kept by partition with the rest of the state; `topics.devices: ""`
        // turns all of it off.
        state = topics.devices.map {
            StateSettings(
                devices: $0, channels: topics.channels, activities: topics.activities, stored: topics.stored,
                activityRepartition: topics.activityRepartition,
                badges: configuration.apps.values.contains(where: \.badgeLedger) ? topics.badges : nil,
                limits: configuration.dispatch.stateLimits)
        }
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
        restoreLimit = dispatch.restoreLimit
        outputTopics = [topics.deliveries, topics.launches, topics.deadLetter, topics.actions, topics.feedback]
        drainLimit = Self.drainLimit(for: configuration, margin: margin)
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
    package static func transactionalID(group: String, worker: String?) -> String {
        let name = worker.flatMap { $0.isEmpty ? nil : $0 } ?? ProcessInfo.processInfo.hostName
        return "\(group).\(name)"
    }
}
