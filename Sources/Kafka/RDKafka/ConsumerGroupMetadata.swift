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
    private let pointer: OpaquePointer

    /// Takes ownership of a metadata copy librdkafka made.
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        rd_kafka_consumer_group_metadata_destroy(pointer)
    }

    /// Lends the metadata to `body`; the pointer must not escape it.
    func withPointer<T>(_ body: (OpaquePointer) -> T) -> T {
        body(pointer)
    }
}
