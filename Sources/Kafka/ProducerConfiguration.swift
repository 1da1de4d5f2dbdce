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
    /// `partitioner`: how a key picks its partition; `murmur2_random` matches the Java client.
    public var partitioner: String = "murmur2_random"
    /// librdkafka properties passed as-is and applied last (security, SASL, TLS, tuning).
    public var properties: [String: String] = [:]

    /// Creates a configuration for the given brokers with the defaults above.
    public init(bootstrapServers: String) {
        self.bootstrapServers = bootstrapServers
    }

    /// Every librdkafka property this configuration sets, in application order (typed first, `properties` last).
    var librdkafkaProperties: [(String, String)] {
        var result: [(String, String)] = [
            ("bootstrap.servers", bootstrapServers),
            ("client.id", clientID),
            ("linger.ms", String(lingerMilliseconds)),
            ("partitioner", partitioner),
            ("enable.idempotence", idempotence ? "true" : "false"),
        ]
        if idempotence { result.append(("acks", "all")) }
        result += properties.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return result
    }
}
