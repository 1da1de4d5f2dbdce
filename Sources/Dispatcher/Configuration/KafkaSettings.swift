/// The `kafka` section: where the brokers are and how this worker joins them.
public struct KafkaSettings: Sendable, Hashable {
    /// `kafka.bootstrapServers`: comma-separated `host:port` list.
    public var bootstrapServers: String = "localhost:9092"
    /// `kafka.groupId`: the consumer group; also written in dead letters as `dlq-consumer-group`.
    public var groupId: String = "notification-dispatcher"
    /// `kafka.properties`: librdkafka properties passed as they are.
    public var properties: [String: String] = [:]

    /// The defaults.
    public init() {}
}
