internal import CRdKafka

/// A consumer's group membership as it stands (group, generation, member id), for a transactional
/// producer's ``KafkaProducer/sendOffsetsToTransaction(_:group:timeout:)``: the group coordinator
/// refuses the offsets of a member whose generation has passed (KIP-447), so a worker that lost
/// its partitions in a rebalance cannot commit them from a zombie transaction.
///
/// Take it (``KafkaConsumer/groupMetadata()``) just before sending the offsets: it is a copy of
/// the membership at that moment.
public final class ConsumerGroupMetadata: @unchecked Sendable {
    // @unchecked Sendable: the pointer is immutable and owned by this object; librdkafka only
    // reads the metadata it points to (it is a copy, not shared with the consumer).

    /// `rd_kafka_consumer_group_metadata_t`, ours: destroyed in `deinit`.
    let pointer: OpaquePointer

    /// Takes ownership of a metadata copy librdkafka made.
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        rd_kafka_consumer_group_metadata_destroy(pointer)
    }
}

extension KafkaConsumer {
    /// The consumer's group membership now (a copy), for a transactional producer's offsets.
    ///
    /// A local call (no request to the cluster): safe on any thread.
    /// - Throws: ``KafkaError`` after ``close()``, or when the consumer is not in a group.
    public func groupMetadata() throws(KafkaError) -> ConsumerGroupMetadata {
        let client = try requireClient("groupMetadata")
        guard let metadata = rd_kafka_consumer_group_metadata(client.handle) else {
            throw KafkaError(RD_KAFKA_RESP_ERR__STATE, message: "the consumer has no group metadata (not in a group)")
        }
        return ConsumerGroupMetadata(owning: metadata)
    }
}
