internal import CRdKafka
import Records

/// A consumer handle's calls. Those that wait for the cluster (``committed(_:milliseconds:)``,
/// ``offsets(of:at:milliseconds:)``, ``seek(_:milliseconds:)``, ``closeConsumer()``) block:
/// never on the cooperative pool. The commit and the unassignment of released partitions share
/// the callbacks' helpers (`RDKafkaConfig+ConsumerCallbacks.swift`).
extension RDKafkaClient {
    /// Serves the consumer queue for up to `milliseconds` (callbacks run inside) and returns the
    /// next message, which the caller then owns (``RDKafkaMessage/destroy()``); nil when none came.
    func consumerPoll(milliseconds: Int32) -> RDKafkaMessage? {
        rd_kafka_consumer_poll(handle, milliseconds).map(RDKafkaMessage.init)
    }

    /// Joins the group for `topics` (`rd_kafka_subscribe`).
    func subscribe(_ topics: [String]) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(topics.map { TopicPartition(topic: $0, partition: -1) })  // -1: RD_KAFKA_PARTITION_UA
        let error = list.withPointer { rd_kafka_subscribe(handle, $0) }
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error, message: "subscribing to \(topics)") }
    }

    /// Assigns exactly `offsets`' partitions, each read from its offset (``RDKafkaOffset``), outside
    /// any group (`rd_kafka_assign`).
    /// - Returns: nil, or the failure explained by `message`.
    func assign(_ offsets: [TopicPartitionOffset], failure message: @autoclosure () -> String) -> KafkaError? {
        let error = RDKafkaTopicPartitionList(offsets).withPointer { rd_kafka_assign(handle, $0) }
        return error == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(error, message: message())
    }

    /// The partitions assigned to this member now.
    func assignment() -> [TopicPartition] {
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        guard rd_kafka_assignment(handle, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return [] }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        return RDKafkaTopicPartitionList.partitions(in: list)
    }

    /// Stops fetching from `partitions` (`rd_kafka_pause_partitions`); they stay assigned.
    func pause(_ partitions: [TopicPartition]) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(partitions)
        let error = list.withPointer { rd_kafka_pause_partitions(handle, $0) }
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error, message: "pausing \(partitions)") }
        if let failure = list.firstError { throw failure }
    }

    /// Resumes fetching from paused `partitions` (`rd_kafka_resume_partitions`).
    func resume(_ partitions: [TopicPartition]) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(partitions)
        let error = list.withPointer { rd_kafka_resume_partitions(handle, $0) }
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error, message: "resuming \(partitions)") }
        if let failure = list.firstError { throw failure }
    }

    /// Moves assigned partitions to `offsets` (`rd_kafka_seek_partitions`), waiting up to
    /// `milliseconds` (librdkafka then purges what it prefetched from the old positions).
    /// - Returns: nil, or the failure (the first partition's, when one could not be moved).
    func seek(_ offsets: [TopicPartitionOffset], milliseconds: Int32) -> KafkaError? {
        RDKafkaTopicPartitionList(offsets).withPointer { list -> KafkaError? in
            if let error = rd_kafka_seek_partitions(handle, list, milliseconds) { return KafkaError(consuming: error) }
            return RDKafkaTopicPartitionList.firstError(in: list)
        }
    }

    /// The group's committed offsets for `partitions` (negative when none is committed), asked of
    /// the coordinator, waiting up to `milliseconds` (`rd_kafka_committed`).
    func committed(_ partitions: [TopicPartition], milliseconds: Int32) -> Result<[TopicPartitionOffset], KafkaError> {
        RDKafkaTopicPartitionList(partitions).withPointer { list in
            let error = rd_kafka_committed(handle, list, milliseconds)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { return .failure(KafkaError(error, message: "reading committed offsets")) }
            if let failure = RDKafkaTopicPartitionList.firstError(in: list) { return .failure(failure) }
            return .success(RDKafkaTopicPartitionList.offsets(in: list))
        }
    }

    /// The offsets of `partitions` at `position` (``RDKafkaOffset/end``: the next offset to be
    /// written, the high watermark; ``RDKafkaOffset/beginning``: the first one kept), for every
    /// partition at once, waiting up to `milliseconds`: by ListOffsets, as
    /// `rd_kafka_query_watermark_offsets` asks (`rd_kafka_offsets_for_times` sends the two
    /// positions as the protocol's "latest" and "earliest" timestamps).
    func offsets(of partitions: [TopicPartition], at position: Int64, milliseconds: Int32) -> Result<[TopicPartitionOffset], KafkaError> {
        let list = RDKafkaTopicPartitionList(partitions.map { TopicPartitionOffset(topic: $0.topic, partition: $0.partition, offset: position) })
        return list.withPointer { list in
            let error = rd_kafka_offsets_for_times(handle, list, milliseconds)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else {
                return .failure(KafkaError(error, message: "the ends of \(partitions.count) partitions to restore"))
            }
            if let failure = RDKafkaTopicPartitionList.firstError(in: list) { return .failure(failure) }
            return .success(RDKafkaTopicPartitionList.offsets(in: list))
        }
    }

    /// The high watermark of `partition` as the last fetch reported it, not the last stable
    /// offset whatever the isolation level (`rd_kafka_get_watermark_offsets`, a local call); nil
    /// when none is known.
    func cachedHighWatermark(of partition: TopicPartition) -> Int64? {
        var low: Int64 = 0
        var high: Int64 = 0
        guard rd_kafka_get_watermark_offsets(handle, partition.topic, partition.partition, &low, &high) == RD_KAFKA_RESP_ERR_NO_ERROR
        else { return nil }
        return high
    }

    /// The consumer's group membership now, a copy (a local call).
    /// - Throws: ``KafkaError`` `_STATE` when the consumer is not in a group.
    func groupMetadata() throws(KafkaError) -> ConsumerGroupMetadata {
        guard let metadata = rd_kafka_consumer_group_metadata(handle) else {
            throw KafkaError(RD_KAFKA_RESP_ERR__STATE, message: "the consumer has no group metadata (not in a group)")
        }
        return ConsumerGroupMetadata(owning: metadata)
    }

    /// Leaves the group and closes the consumer (`rd_kafka_consumer_close`; revocations are
    /// served by the rebalance callback meanwhile). Every message taken must be destroyed first.
    /// - Returns: nil, or the failure.
    func closeConsumer() -> KafkaError? {
        let error = rd_kafka_consumer_close(handle)
        return error == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(error)
    }
}
