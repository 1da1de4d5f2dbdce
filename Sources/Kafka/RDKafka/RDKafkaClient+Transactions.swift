internal import CRdKafka
import Records

/// A transactional producer's calls (KIP-98). Each returns nil or the failure, read from
/// librdkafka's `rd_kafka_error_t` with its classification (``KafkaError/init(consuming:)``).
/// All but ``beginTransaction()`` wait for the cluster: never on the cooperative pool.
extension RDKafkaClient {
    /// `rd_kafka_init_transactions`, waiting up to `milliseconds`.
    func initTransactions(milliseconds: Int32) -> KafkaError? {
        rd_kafka_init_transactions(handle, milliseconds).map { KafkaError(consuming: $0) }
    }

    /// `rd_kafka_begin_transaction` (a local call).
    func beginTransaction() -> KafkaError? {
        rd_kafka_begin_transaction(handle).map { KafkaError(consuming: $0) }
    }

    /// `rd_kafka_send_offsets_to_transaction` of `offsets` for the member `group`, waiting up to `milliseconds`.
    func sendOffsetsToTransaction(_ offsets: [TopicPartitionOffset], group: ConsumerGroupMetadata, milliseconds: Int32) -> KafkaError? {
        RDKafkaTopicPartitionList(offsets).withPointer { list in
            group.withPointer { group in
                rd_kafka_send_offsets_to_transaction(handle, list, group, milliseconds).map { KafkaError(consuming: $0) }
            }
        }
    }

    /// `rd_kafka_commit_transaction`, waiting up to `milliseconds`.
    func commitTransaction(milliseconds: Int32) -> KafkaError? {
        rd_kafka_commit_transaction(handle, milliseconds).map { KafkaError(consuming: $0) }
    }

    /// `rd_kafka_abort_transaction`, waiting up to `milliseconds`.
    func abortTransaction(milliseconds: Int32) -> KafkaError? {
        rd_kafka_abort_transaction(handle, milliseconds).map { KafkaError(consuming: $0) }
    }
}
