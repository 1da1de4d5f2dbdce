internal import CRdKafka
import Records

/// Owns an `rd_kafka_topic_partition_list_t` built from Swift values; freed in `deinit`.
final class RDKafkaTopicPartitionList {
    /// The list; lent to librdkafka calls through ``withPointer(_:)``.
    private let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    /// A list of partitions (offset left at librdkafka's "invalid", meaning "not given").
    init(_ partitions: [TopicPartition]) {
        pointer = rd_kafka_topic_partition_list_new(Int32(clamping: partitions.count))
        for partition in partitions {
            rd_kafka_topic_partition_list_add(pointer, partition.topic, partition.partition)
        }
    }

    /// A list of partitions with offsets.
    init(_ offsets: [TopicPartitionOffset]) {
        pointer = rd_kafka_topic_partition_list_new(Int32(clamping: offsets.count))
        for offset in offsets {
            rd_kafka_topic_partition_list_add(pointer, offset.topic, offset.partition).pointee.offset = offset.offset
        }
    }

    deinit {
        rd_kafka_topic_partition_list_destroy(pointer)
    }

    /// Lends the list to `body`; the pointer must not escape it.
    func withPointer<T, E: Error>(
        _ body: (UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) throws(E) -> T
    ) throws(E) -> T {
        try body(pointer)
    }

    /// The first per-partition error librdkafka left in the list, if any.
    var firstError: KafkaError? {
        Self.firstError(in: pointer)
    }

    /// The first per-partition error in a list librdkafka handed us, if any.
    static func firstError(in list: UnsafePointer<rd_kafka_topic_partition_list_t>) -> KafkaError? {
        for index in 0..<Int(list.pointee.cnt) {
            let element = list.pointee.elems[index]
            if element.err != RD_KAFKA_RESP_ERR_NO_ERROR {
                let topic = element.topic.map { String(cString: $0) } ?? "?"
                return KafkaError(element.err, message: "\(topic)[\(element.partition)]: \(String(cString: rd_kafka_err2str(element.err)))")
            }
        }
        return nil
    }

    /// The partitions of a list librdkafka handed us (copied: the list is freed after the callback).
    static func partitions(in list: UnsafePointer<rd_kafka_topic_partition_list_t>?) -> [TopicPartition] {
        guard let list else { return [] }
        var result: [TopicPartition] = []
        result.reserveCapacity(Int(list.pointee.cnt))
        for index in 0..<Int(list.pointee.cnt) {
            let element = list.pointee.elems[index]
            guard let topic = element.topic else { continue }
            result.append(TopicPartition(topic: String(cString: topic), partition: element.partition))
        }
        return result
    }

    /// The partitions and offsets of a list librdkafka handed us.
    static func offsets(in list: UnsafePointer<rd_kafka_topic_partition_list_t>?) -> [TopicPartitionOffset] {
        guard let list else { return [] }
        var result: [TopicPartitionOffset] = []
        result.reserveCapacity(Int(list.pointee.cnt))
        for index in 0..<Int(list.pointee.cnt) {
            let element = list.pointee.elems[index]
            guard let topic = element.topic else { continue }
            result.append(TopicPartitionOffset(topic: String(cString: topic), partition: element.partition, offset: element.offset))
        }
        return result
    }
}
