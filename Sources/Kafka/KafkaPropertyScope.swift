/// Which kind of librdkafka client a configuration property belongs to, as librdkafka's
/// CONFIGURATION.md marks it (its `C/P` column, librdkafka 2.8).
///
/// One set of `kafka.properties` configures the worker's consumer and its producers alike; each
/// client takes only what applies to it, because librdkafka logs a `CONFWARN` warning at start for
/// every consumer property given to a producer and every producer property given to a consumer.
/// A property not listed here (security, TLS, SASL, socket, metadata, debug: the `*` rows) applies
/// to both.
enum KafkaPropertyScope: Sendable, Equatable {
    case consumer
    case producer
    case both

    /// The scope of the property `name`.
    init(property name: String) {
        if Self.consumerOnly.contains(name) {
            self = .consumer
        } else if Self.producerOnly.contains(name) {
            self = .producer
        } else {
            self = .both
        }
    }

    /// The `C` rows of librdkafka 2.8's CONFIGURATION.md (global and topic properties).
    static let consumerOnly: Set<String> = [
        "auto.commit.enable", "auto.commit.interval.ms", "auto.offset.reset", "check.crcs",
        "consume.callback.max.messages", "consume_cb", "coordinator.query.interval.ms", "enable.auto.commit",
        "enable.auto.offset.store", "enable.partition.eof", "fetch.error.backoff.ms", "fetch.max.bytes",
        "fetch.message.max.bytes", "fetch.min.bytes", "fetch.queue.backoff.ms", "fetch.wait.max.ms", "group.id",
        "group.instance.id", "group.protocol", "group.protocol.type", "group.remote.assignor",
        "heartbeat.interval.ms", "isolation.level", "max.partition.fetch.bytes", "max.poll.interval.ms",
        "offset.store.method", "offset.store.path", "offset.store.sync.interval.ms", "offset_commit_cb",
        "partition.assignment.strategy", "queued.max.messages.kbytes", "queued.min.messages", "rebalance_cb",
        "session.timeout.ms",
    ]

    /// The `P` rows of librdkafka 2.8's CONFIGURATION.md (global and topic properties).
    static let producerOnly: Set<String> = [
        "acks", "batch.num.messages", "batch.size", "compression.codec", "compression.level", "compression.type",
        "delivery.report.only.error", "delivery.timeout.ms", "dr_cb", "dr_msg_cb", "enable.gapless.guarantee",
        "enable.idempotence", "linger.ms", "message.send.max.retries", "message.timeout.ms", "msg_order_cmp",
        "partitioner", "partitioner_cb", "produce.offset.report", "queue.buffering.backpressure.threshold",
        "queue.buffering.max.kbytes", "queue.buffering.max.messages", "queue.buffering.max.ms", "queuing.strategy",
        "request.required.acks", "request.timeout.ms", "retries", "sticky.partitioning.linger.ms",
        "transaction.timeout.ms", "transactional.id",
    ]
}
