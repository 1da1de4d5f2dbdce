internal import CRdKafka

/// Metadata requests (`rd_kafka_metadata`). Each blocks up to its time limit: never on the
/// cooperative pool.
extension RDKafkaClient {
    /// Asks the cluster about one topic (blocks up to `milliseconds`: never on the cooperative pool).
    /// - Returns: its partition count, or the error the cluster gave for it.
    func describeTopic(_ topic: String, milliseconds: Int32) -> Result<Int32, KafkaError> {
        withMetadata(of: topic, milliseconds: milliseconds, failure: "asking the cluster about \(topic)") { metadata in
            guard metadata.pointee.topic_cnt > 0 else {
                return .failure(KafkaError(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, message: "\(topic): the cluster does not know it"))
            }
            let described = metadata.pointee.topics[0]
            guard described.err == RD_KAFKA_RESP_ERR_NO_ERROR else {
                let reason = String(cString: rd_kafka_err2str(described.err))
                return .failure(KafkaError(described.err, message: "\(topic): \(reason)"))
            }
            return .success(described.partition_cnt)
        }
    }

    /// The broker leading `topic`'s partition `partition` (blocks up to `milliseconds`); nil
    /// when the partition does not exist.
    func leader(topic: String, partition: Int32, milliseconds: Int32) -> Result<Int32?, KafkaError> {
        withMetadata(of: topic, milliseconds: milliseconds, failure: "metadata for \(topic)") { metadata in
            for topicIndex in 0..<Int(metadata.pointee.topic_cnt) {
                let described = metadata.pointee.topics[topicIndex]
                for partitionIndex in 0..<Int(described.partition_cnt) where described.partitions[partitionIndex].id == partition {
                    return .success(described.partitions[partitionIndex].leader)
                }
            }
            return .success(nil)
        }
    }

    /// Asks the cluster for its brokers (no topic), which succeeds once a broker answered (blocks
    /// up to `milliseconds`).
    func checkBrokers(milliseconds: Int32) -> Result<Void, KafkaError> {
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let error = rd_kafka_metadata(handle, 0, nil, &metadata, milliseconds)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            return .failure(KafkaError(error, message: "asking the cluster for its brokers"))
        }
        rd_kafka_metadata_destroy(metadata)
        return .success(())
    }

    /// Every topic the cluster lets this client see, with its partition count, from one metadata
    /// request for all topics (blocks up to `milliseconds`: never on the cooperative pool). Asking
    /// for all topics, rather than for the ones wanted, never creates a topic on a cluster that
    /// creates the topics it is asked about; a topic the client may not describe is left out, as
    /// an unknown one is.
    func partitionCounts(milliseconds: Int32) -> Result<[String: Int32], KafkaError> {
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let error = rd_kafka_metadata(handle, 1, nil, &metadata, milliseconds)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            return .failure(KafkaError(error, message: "asking the cluster for its topics"))
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        var counts: [String: Int32] = [:]
        for index in 0..<Int(metadata.pointee.topic_cnt) {
            let topic = metadata.pointee.topics[index]
            if topic.err == RD_KAFKA_RESP_ERR_NO_ERROR, let name = topic.topic { counts[String(cString: name)] = topic.partition_cnt }
        }
        return .success(counts)
    }

    /// Lends the metadata of one topic to `body` (a topic handle made for the request and
    /// destroyed after it); `failure` is the message of a failed request.
    private func withMetadata<T>(
        of topic: String, milliseconds: Int32, failure: String,
        _ body: (UnsafePointer<rd_kafka_metadata>) -> Result<T, KafkaError>
    ) -> Result<T, KafkaError> {
        guard let topicHandle = rd_kafka_topic_new(handle, topic, nil) else {
            return .failure(KafkaError(rd_kafka_last_error(), message: "topic handle for \(topic)"))
        }
        defer { rd_kafka_topic_destroy(topicHandle) }
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let error = rd_kafka_metadata(handle, 0, topicHandle, &metadata, milliseconds)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            return .failure(KafkaError(error, message: failure))
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        return body(metadata)
    }
}
