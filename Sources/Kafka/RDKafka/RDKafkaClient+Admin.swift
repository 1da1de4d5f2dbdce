internal import CRdKafka

/// Admin requests (``KafkaAdmin``).
extension RDKafkaClient {
    /// Creates `topics` (CreateTopics) and waits up to `milliseconds` for the result (blocking:
    /// a dedicated thread only); a topic that already exists is not an error.
    func createTopics(_ topics: [TopicSpecification], milliseconds: Int32) -> Result<Void, KafkaError> {
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
        let queue = rd_kafka_queue_new(handle)
        defer { rd_kafka_queue_destroy(queue) }
        let options = rd_kafka_AdminOptions_new(handle, RD_KAFKA_ADMIN_OP_CREATETOPICS)
        defer { rd_kafka_AdminOptions_destroy(options) }
        var reason = [CChar](repeating: 0, count: 512)
        _ = rd_kafka_AdminOptions_set_request_timeout(options, milliseconds, &reason, reason.count)
        _ = rd_kafka_AdminOptions_set_operation_timeout(options, milliseconds, &reason, reason.count)
        newTopics.withUnsafeMutableBufferPointer { buffer in
            rd_kafka_CreateTopics(handle, buffer.baseAddress, buffer.count, options, queue)
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
