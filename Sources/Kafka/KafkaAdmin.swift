import BlockingWork
internal import CRdKafka
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
        client = try RDKafkaClient(type: RD_KAFKA_PRODUCER, config: config, context: ClientContext(logger: logger))
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
            Self.createTopics(topics, client: client, milliseconds: milliseconds)
        }
        try result.get()
    }

    /// Sends CreateTopics and waits for the result (blocking: dedicated thread only).
    private static func createTopics(_ topics: [TopicSpecification], client: RDKafkaClient, milliseconds: Int32) -> Result<Void, KafkaError> {
        var newTopics: [OpaquePointer?] = []
        defer { newTopics.forEach { rd_kafka_NewTopic_destroy($0) } }
        for topic in topics {
            var reason = [CChar](repeating: 0, count: 512)
            guard let newTopic = rd_kafka_NewTopic_new(topic.name, topic.partitions, Int32(topic.replicationFactor), &reason, reason.count) else {
                return .failure(KafkaError.invalidConfiguration("topic \(topic.name): \(String(cBuffer: reason))"))
            }
            newTopics.append(newTopic)
            for (name, value) in topic.config.sorted(by: { $0.key < $1.key }) {
                let error = rd_kafka_NewTopic_set_config(newTopic, name, value)
                guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { return .failure(KafkaError(error, message: "topic \(topic.name) config \(name)")) }
            }
        }
        let queue = rd_kafka_queue_new(client.handle)
        defer { rd_kafka_queue_destroy(queue) }
        let options = rd_kafka_AdminOptions_new(client.handle, RD_KAFKA_ADMIN_OP_CREATETOPICS)
        defer { rd_kafka_AdminOptions_destroy(options) }
        var reason = [CChar](repeating: 0, count: 512)
        _ = rd_kafka_AdminOptions_set_request_timeout(options, milliseconds, &reason, reason.count)
        _ = rd_kafka_AdminOptions_set_operation_timeout(options, milliseconds, &reason, reason.count)
        newTopics.withUnsafeMutableBufferPointer { buffer in
            rd_kafka_CreateTopics(client.handle, buffer.baseAddress, buffer.count, options, queue)
        }
        // The request's own time-outs answer first; the extra second only guards against a lost answer.
        guard let event = rd_kafka_queue_poll(queue, milliseconds &+ 1_000) else {
            return .failure(KafkaError(RD_KAFKA_RESP_ERR__TIMED_OUT, message: "creating topics"))
        }
        defer { rd_kafka_event_destroy(event) }
        let eventError = rd_kafka_event_error(event)
        guard eventError == RD_KAFKA_RESP_ERR_NO_ERROR else {
            return .failure(KafkaError(eventError, message: String(cString: rd_kafka_event_error_string(event))))
        }
        guard let result = rd_kafka_event_CreateTopics_result(event) else {
            return .failure(KafkaError(RD_KAFKA_RESP_ERR__FAIL, message: "unexpected admin event"))
        }
        var count = 0
        guard let results = rd_kafka_CreateTopics_result_topics(result, &count) else { return .success(()) }
        for index in 0..<count {
            let topicResult = results[index]
            let error = rd_kafka_topic_result_error(topicResult)
            if error == RD_KAFKA_RESP_ERR_NO_ERROR || error == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS { continue }
            let name = String(cString: rd_kafka_topic_result_name(topicResult))
            let message = rd_kafka_topic_result_error_string(topicResult).map { String(cString: $0) } ?? ""
            return .failure(KafkaError(error, message: "creating topic \(name): \(message)"))
        }
        return .success(())
    }
}
