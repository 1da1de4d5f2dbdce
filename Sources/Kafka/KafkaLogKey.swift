/// Logging metadata keys of the Kafka module, in one place.
enum KafkaLogKey {
    /// The librdkafka facility (subsystem) of a log line.
    static let facility = "kafka.facility"
    /// A topic name.
    static let topic = "kafka.topic"
    /// A partition number.
    static let partition = "kafka.partition"
    /// An offset.
    static let offset = "kafka.offset"
    /// A number of partitions.
    static let partitions = "kafka.partitions"
    /// A librdkafka error name.
    static let error = "kafka.error"
    /// A number of message batches.
    static let batches = "kafka.batches"
    /// Why the poll thread did what it did.
    static let cause = "kafka.cause"
}
