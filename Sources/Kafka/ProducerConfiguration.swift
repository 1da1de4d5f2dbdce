/// How a ``KafkaProducer`` connects and batches: typed settings plus librdkafka properties as-is.
public struct ProducerConfiguration: Sendable {
    /// `bootstrap.servers`: comma-separated `host:port` list.
    public var bootstrapServers: String
    /// `client.id`.
    public var clientID: String = "notification-dispatcher"
    /// `enable.idempotence` with `acks=all`: no duplicates or reordering from librdkafka's own retries.
    public var idempotence: Bool = true
    /// `linger.ms`: how long a batch may wait to fill up.
    public var lingerMilliseconds: Int = 5
    /// `message.timeout.ms`: how long librdkafka keeps trying to deliver a record before its
    /// delivery report fails. librdkafka's default is 5 minutes; a shorter one hands a record stuck
    /// through a broker outage back to the caller, whose own retry (the worker never skips an
    /// output) then sends it again on a fresh connection.
    public var deliveryTimeout: Duration = .seconds(30)
    /// `partitioner`: how a key picks its partition; `murmur2_random` matches the Java client.
    public var partitioner: String = "murmur2_random"
    /// `allow.auto.create.topics`: whether asking about (or producing to) a topic the cluster does
    /// not know may create it, where the brokers allow that. librdkafka's producer default is
    /// `true`; a worker that checks its output topics at start sets `false`, so a misspelt topic
    /// is reported instead of created.
    public var createsTopics: Bool = true
    /// `message.max.bytes`: the largest record librdkafka sends, framing included; `nil` keeps
    /// librdkafka's default (1,000,000).
    public var maxMessageBytes: Int?
    /// `transactional.id`: set, the producer is transactional (``KafkaProducer/initTransactions(timeout:)``):
    /// its records become visible to `read_committed` readers only when their transaction commits,
    /// and a new producer with the same id fences this one. It should be stable for one logical
    /// producer across restarts, so that a restart fences its previous incarnation at once.
    /// `nil` (the default): not transactional.
    public var transactionalID: String?
    /// `transaction.timeout.ms`: how long a transaction may stay open before the coordinator aborts
    /// it (only with ``transactionalID``). It must be at least ``deliveryTimeout``.
    public var transactionTimeout: Duration = .seconds(60)
    /// `enable.metrics.push` (KIP-714 client metrics, librdkafka 2.5 and later, on by default
    /// there): off unless `properties` turn it on. On connecting, each client asks the broker for
    /// a metrics subscription and, where a broker has one, collects and pushes its metrics every
    /// interval; 2.0.2 had none of it, and the dispatcher exports its own metrics to Prometheus.
    /// docs/performance.md, "librdkafka 2.0.2 → 2.8.0", has what it cost.
    public var pushesClientMetrics: Bool = false
    /// librdkafka properties passed as-is (security, SASL, TLS, tuning), applied after the typed
    /// settings above except the delivery guarantees (`enable.idempotence`, `acks`) and
    /// `message.max.bytes`, which are applied after them so no property can turn them off. Those
    /// that belong to consumers only are left out (``KafkaPropertyScope``).
    public var properties: [String: String] = [:]

    /// Creates a configuration for the given brokers with the defaults above.
    public init(bootstrapServers: String) {
        self.bootstrapServers = bootstrapServers
    }

    /// Every librdkafka property this configuration sets, in application order: typed settings,
    /// then `properties`, then the guarantees, the size limit and the transactional id, which
    /// therefore always hold.
    package var librdkafkaProperties: [(String, String)] {
        var result: [(String, String)] = [
            ("bootstrap.servers", bootstrapServers),
            ("client.id", clientID),
            ("linger.ms", String(lingerMilliseconds)),
            ("message.timeout.ms", String(deliveryTimeout.clampedMilliseconds)),
            ("partitioner", partitioner),
            ("allow.auto.create.topics", createsTopics ? "true" : "false"),
        ]
        // Only where the linked librdkafka knows it: an unknown property stops the client.
        if KafkaLibrary.versionNumber >= 0x0205_0000 {
            result.append(("enable.metrics.push", pushesClientMetrics ? "true" : "false"))
        }
        // A consumer's property (one set of `kafka.properties` serves every client) is left out:
        // librdkafka would only warn about it.
        result += properties.filter { KafkaPropertyScope(property: $0.key) != .consumer }
            .sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        result.append(("enable.idempotence", idempotence ? "true" : "false"))
        if idempotence { result.append(("acks", "all")) }
        if let maxMessageBytes { result.append(("message.max.bytes", String(maxMessageBytes))) }
        if let transactionalID {
            result.append(("transactional.id", transactionalID))
            result.append(("transaction.timeout.ms", String(transactionTimeout.clampedMilliseconds)))
        }
        return result
    }
}
