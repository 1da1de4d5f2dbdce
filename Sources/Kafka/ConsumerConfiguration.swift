/// How a ``KafkaConsumer`` (or ``KafkaTopicReader``) connects: typed settings plus librdkafka properties as-is.
///
/// Fixed, whatever `properties` say: `enable.auto.commit=false`, `enable.auto.offset.store=false`
/// (the caller commits explicit offsets); `partition.assignment.strategy` is ``assignor``.
public struct ConsumerConfiguration: Sendable {
    /// How a group's partitions are shared among its members (`partition.assignment.strategy`).
    public enum Assignor: String, Sendable {
        /// `cooperative-sticky`: a rebalance moves only the partitions that change owner; the
        /// others keep being consumed meanwhile.
        case cooperativeSticky = "cooperative-sticky"
        /// `range` (eager): every member gives up all its partitions at each rebalance and gets
        /// the new assignment whole; partition *n* of every subscribed topic with the same
        /// partition count goes to the same member, which is what co-partitioned state needs.
        case range
    }

    /// `bootstrap.servers`: comma-separated `host:port` list.
    public var bootstrapServers: String
    /// `group.id` (ignored by ``KafkaTopicReader``, which reads outside any group).
    public var groupID: String
    /// `client.id`.
    public var clientID: String = "notification-dispatcher"
    /// `session.timeout.ms`.
    public var sessionTimeout: Duration = .seconds(45)
    /// `heartbeat.interval.ms`.
    public var heartbeatInterval: Duration = .seconds(3)
    /// `auto.offset.reset`: where to start without a committed offset (`earliest` or `latest`).
    public var autoOffsetReset: String = "earliest"
    /// `isolation.level`: whether records of open and aborted transactions are read.
    public var isolationLevel: IsolationLevel = .readCommitted
    /// `statistics.interval.ms`; nil for no ``ConsumerEvent/statistics(_:)`` events.
    public var statisticsInterval: Duration? = nil
    /// Most records handed over in one ``ConsumerEvent/messages(_:)`` event (not a librdkafka
    /// property). The poll thread hands a batch over only once the previous one was read, so an
    /// owner that holds the intake on reading a batch takes in at most two batches past its limit.
    public var maxBatchSize: Int = 1_000
    /// Whether the consumer lends its messages (``ConsumerEvent/lent(_:)``, a ``ConsumedBatch``
    /// read in place) instead of copying each into a ``KafkaMessage``
    /// (``ConsumerEvent/messages(_:)``). Not a librdkafka property.
    public var lendsMessages: Bool = false
    /// `enable.metrics.push` (KIP-714 client metrics, librdkafka 2.5 and later, on by default
    /// there): off unless `properties` turn it on. On connecting, each client asks the broker for
    /// a metrics subscription and, where a broker has one, collects and pushes its metrics every
    /// interval; 2.0.2 had none of it, and the dispatcher exports its own metrics to Prometheus.
    /// docs/performance.md, "librdkafka 2.0.2 → 2.8.0", has what it cost.
    public var pushesClientMetrics: Bool = false
    /// `partition.assignment.strategy`.
    public var assignor: Assignor = .cooperativeSticky
    /// librdkafka properties passed as-is after the typed ones (security, `fetch.wait.max.ms`, ...);
    /// those that belong to producers only are left out (``KafkaPropertyScope``).
    public var properties: [String: String] = [:]

    /// Creates a configuration for the given brokers and group with the defaults above.
    public init(bootstrapServers: String, groupID: String) {
        self.bootstrapServers = bootstrapServers
        self.groupID = groupID
    }

    /// `max.poll.interval.ms` as `properties` set it (librdkafka's default, 300 s, otherwise): how
    /// long the member may go without polling before it leaves the group.
    var maxPollInterval: Duration {
        properties["max.poll.interval.ms"].flatMap(Int.init).map { .milliseconds($0) } ?? .seconds(300)
    }

    /// Every librdkafka property this configuration sets, in application order.
    package var librdkafkaProperties: [(String, String)] {
        var result: [(String, String)] = [
            ("bootstrap.servers", bootstrapServers),
            ("group.id", groupID),
            ("client.id", clientID),
            ("session.timeout.ms", String(sessionTimeout.clampedMilliseconds)),
            ("heartbeat.interval.ms", String(heartbeatInterval.clampedMilliseconds)),
            ("auto.offset.reset", autoOffsetReset),
            ("isolation.level", isolationLevel.rawValue),
        ]
        if let statisticsInterval {
            result.append(("statistics.interval.ms", String(statisticsInterval.clampedMilliseconds)))
        }
        // Only where the linked librdkafka knows it: an unknown property stops the client.
        if KafkaLibrary.versionNumber >= 0x0205_0000 {
            result.append(("enable.metrics.push", pushesClientMetrics ? "true" : "false"))
        }
        // A producer's property (one set of `kafka.properties` serves every client) is left out:
        // librdkafka would only warn about it.
        result += properties.filter { KafkaPropertyScope(property: $0.key) != .producer }
            .sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        result += [
            ("enable.auto.commit", "false"),
            ("enable.auto.offset.store", "false"),
            ("partition.assignment.strategy", assignor.rawValue),
        ]
        return result
    }
}
