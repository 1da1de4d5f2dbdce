import Logging
import Records

/// The metadata keys of the worker's log lines, in one place so every line names things alike.
enum LogKey {
    static let topic = "kafka.topic"
    static let partition = "kafka.partition"
    static let partitions = "kafka.partitions"
    static let offset = "kafka.offset"
    static let offsets = "kafka.offsets"
    static let group = "kafka.group"
    static let apnsID = "apns.id"
    static let ordering = "dispatch.ordering"
    static let inFlight = "dispatch.in_flight"
    static let attempt = "attempt"
    static let error = "error"
    static let httpHost = "http.host"
    static let httpPort = "http.port"
    static let worker = "metrics.worker_id"
    static let guarantee = "dispatch.guarantee"
    static let transactionalID = "kafka.transactional_id"
}

extension [TopicPartitionOffset] {
    /// The value of a `kafka.offsets` field: `topic[partition]@offset`, sorted, comma-separated.
    /// Tests read commits and restores back in this form (docs/testing.md, Tansu).
    var loggedOffsets: Logger.MetadataValue {
        .string(map { "\($0.topicPartition)@\($0.offset)" }.sorted().joined(separator: ","))
    }
}
