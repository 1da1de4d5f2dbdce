internal import CRdKafka

/// Owns the topic handles (`rd_kafka_topic_t`) a producer made by name, so that producing to a
/// topic from lent bytes finds no topic by name (``ProducerTopic``).
///
/// Ownership: the handles are destroyed in `deinit`. librdkafka wants them destroyed before their
/// client's handle, so this keeps the client alive until then. Not thread-safe: the producer keeps
/// it under its lock (``ProducerCore``).
final class RDKafkaTopicHandles {
    /// The client the handles belong to, kept alive until they are destroyed.
    private let client: RDKafkaClient
    /// The handles made so far, by topic name.
    private var handles: [String: OpaquePointer] = [:]

    /// No handles yet, for `client`'s topics.
    init(client: RDKafkaClient) {
        self.client = client
    }

    deinit {
        for handle in handles.values { rd_kafka_topic_destroy(handle) }
    }

    /// The handle of topic `name`, made on first use; nil when librdkafka could not make one.
    func handle(named name: String) -> OpaquePointer? {
        if let handle = handles[name] { return handle }
        guard let handle = rd_kafka_topic_new(client.handle, name, nil) else { return nil }
        handles[name] = handle
        return handle
    }
}
