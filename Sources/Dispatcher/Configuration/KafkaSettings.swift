/// The `kafka` section: where the brokers are and how this worker joins them.
public struct KafkaSettings: Sendable, Hashable {
    /// `kafka.bootstrapServers`: comma-separated `host:port` list.
    public var bootstrapServers: String = "localhost:9092"
    /// `kafka.groupId`: the consumer group; also written in dead letters as `dlq-consumer-group`.
    public var groupId: String = "notification-dispatcher"
    /// `kafka.maxMessageBytes`: the largest record the worker produces, framing included; given to
    /// the producer as librdkafka's `message.max.bytes`. Outputs are fitted to it before they are
    /// produced (docs/worker.md, "Failures"). Keep it at or below the brokers' and topics' own limit.
    public var maxMessageBytes: Int = 1_000_000
    /// The accepted range of `maxMessageBytes`: a dead letter's own headers and the largest delivery
    /// of a valid request fit in the lower bound; librdkafka refuses more than the upper one.
    package static let maxMessageBytesRange = 16_384...1_000_000_000
    /// `kafka.properties`: librdkafka properties passed as they are, except those the worker's
    /// guarantees depend on (``reservedProperties``), which are refused at start-up.
    public var properties: [String: String] = [:]

    /// librdkafka properties the worker sets itself, because at-least-once delivery, the output
    /// limit or the group depend on them: naming one in `kafka.properties` is a configuration error
    /// that says which setting to use instead (or that it cannot be changed).
    package static let reservedProperties: [String: String] = [
        "enable.idempotence": "the producer is always idempotent: outputs are written exactly once per attempt and in order",
        "acks": "outputs are acknowledged by all in-sync replicas (acks=all) before a request is committed",
        "enable.auto.commit": "offsets are committed by the worker, only for requests whose outputs were acknowledged",
        "enable.auto.offset.store": "offsets are stored by the worker, only for requests whose outputs were acknowledged",
        "message.max.bytes": "set kafka.maxMessageBytes instead: outputs are fitted to it before they are produced",
        "bootstrap.servers": "set kafka.bootstrapServers instead",
        "group.id": "set kafka.groupId instead",
        "max.in.flight.requests.per.connection": "the idempotent producer keeps order with librdkafka's own setting",
        "transactional.id":
            "set dispatch.guarantee: exactly-once instead: each worker's transactional id is kafka.groupId and metrics.workerId (or the host name)",
        "transaction.timeout.ms": "with dispatch.guarantee: exactly-once the worker sets it from its drain limit and commit interval",
        "isolation.level": "the worker reads requests read_committed: only committed records of transactional producers",
    ]

    /// The defaults.
    public init() {}
}
