import BlockingWork
package import Logging

/// Cluster administration: creating topics.
///
/// Needs a cluster controller: librdkafka's mock cluster has none that answers admin requests (2.0.2
/// names controller 0, which is no broker; 2.8.0 too times out "waiting for controller"), so against
/// ``EmbeddedKafkaCluster`` requests time out; create its topics with
/// ``EmbeddedKafkaCluster/createTopics(_:)`` instead.
package final class KafkaAdmin: Sendable {
    /// The handle the admin requests go through.
    private let client: RDKafkaClient

    /// Creates an admin client for the given brokers; `properties` are passed to librdkafka as-is,
    /// except those that belong to consumers or producers only (``KafkaPropertyScope``).
    ///
    /// - Throws: ``KafkaError`` when librdkafka rejects a property.
    package init(bootstrapServers: String, properties: [String: String] = [:], logger: Logger = Logger(label: "kafka.admin")) throws(KafkaError) {
        let config = RDKafkaConfig()
        try config.set("bootstrap.servers", bootstrapServers)
        // Admin requests need neither a consumer's nor a producer's own properties (librdkafka
        // would only warn about them): the shared ones, such as security, are what counts here.
        try config.set(properties.filter { KafkaPropertyScope(property: $0.key) == .both })
        client = try RDKafkaClient(.producer, config: config, context: ClientContext(logger: logger))
    }

    /// Creates `topics`; a topic that already exists is not an error.
    ///
    /// Waits for the answer on a thread of its own, never on the cooperative pool.
    /// - Throws: ``KafkaError`` for the first topic that could not be created, or `_TIMED_OUT`.
    package func createTopics(_ topics: [TopicSpecification], timeout: Duration) async throws(KafkaError) {
        guard !topics.isEmpty else { return }
        let client = self.client
        let milliseconds = timeout.clampedMilliseconds
        let result: Result<Void, KafkaError> = await BlockingWork.run(onThreadNamed: "kafka-admin") {
            client.createTopics(topics, milliseconds: milliseconds)
        }
        try result.get()
    }
}
