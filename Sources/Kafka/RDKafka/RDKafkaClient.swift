internal import CRdKafka

/// Owns one `rd_kafka_t` handle and the retained context its C callbacks see.
///
/// Ownership: the handle is destroyed in `deinit`, then the context is released, so no callback can
/// outlive its context. A consumer's queue reference is destroyed before the handle.
final class RDKafkaClient: @unchecked Sendable {
    // @unchecked Sendable: `handle` and `consumerQueue` are immutable after init and librdkafka's
    // handle API is thread-safe; whoever holds a reference may call it from any thread.

    /// The librdkafka handle.
    let handle: OpaquePointer
    /// `rd_kafka_queue_get_consumer` for consumers (a reference we must destroy), else nil.
    let consumerQueue: OpaquePointer?
    /// The context retained for the handle's callbacks; released after `rd_kafka_destroy`.
    private let context: Unmanaged<ClientContext>

    /// Creates a handle from `config` (which it then owns) with `context` as its callbacks' opaque.
    ///
    /// For consumers it also routes the main queue to the consumer queue (`rd_kafka_poll_set_consumer`)
    /// so that one `rd_kafka_consumer_poll` serves messages, rebalances, statistics and errors.
    init(type: rd_kafka_type_t, config: RDKafkaConfig, context: ClientContext) throws(KafkaError) {
        config.routeLogs()
        let retained = Unmanaged.passRetained(context)
        rd_kafka_conf_set_opaque(config.pointer, retained.toOpaque())
        let capacity = 512
        var reason = [CChar](repeating: 0, count: capacity)
        guard let handle = rd_kafka_new(type, config.pointer, &reason, capacity) else {
            retained.release()
            let explanation = String(cBuffer: reason)
            throw KafkaError.invalidConfiguration(explanation)
        }
        config.relinquish()
        self.handle = handle
        self.context = retained
        if type == RD_KAFKA_CONSUMER {
            rd_kafka_poll_set_consumer(handle)
            consumerQueue = rd_kafka_queue_get_consumer(handle)
        } else {
            consumerQueue = nil
        }
    }

    deinit {
        if let consumerQueue { rd_kafka_queue_destroy(consumerQueue) }
        rd_kafka_destroy(handle)
        context.release()
    }
}

extension RDKafkaClient {
    /// Asks the cluster about one topic (blocks up to `milliseconds`: never on the cooperative pool).
    /// - Returns: its partition count, or the error the cluster gave for it.
    func describeTopic(_ topic: String, milliseconds: Int32) -> Result<Int32, KafkaError> {
        guard let topicHandle = rd_kafka_topic_new(handle, topic, nil) else {
            return .failure(KafkaError(rd_kafka_last_error(), message: "topic handle for \(topic)"))
        }
        defer { rd_kafka_topic_destroy(topicHandle) }
        var metadata: UnsafePointer<rd_kafka_metadata>?
        let error = rd_kafka_metadata(handle, 0, topicHandle, &metadata, milliseconds)
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
            return .failure(KafkaError(error, message: "asking the cluster about \(topic)"))
        }
        defer { rd_kafka_metadata_destroy(metadata) }
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

extension RDKafkaClient {
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
}
