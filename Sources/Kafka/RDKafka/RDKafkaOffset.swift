internal import CRdKafka

/// librdkafka's logical offsets, where a partition is read from or which offset a query asks for.
enum RDKafkaOffset {
    /// The first offset the partition keeps (`RD_KAFKA_OFFSET_BEGINNING`).
    static var beginning: Int64 { Int64(RD_KAFKA_OFFSET_BEGINNING) }
    /// The next offset to be written: the partition's end (`RD_KAFKA_OFFSET_END`).
    static var end: Int64 { Int64(RD_KAFKA_OFFSET_END) }
}
