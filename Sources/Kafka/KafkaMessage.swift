public import Foundation
public import Records

/// One record read from Kafka.
public struct KafkaMessage: Sendable {
    /// The topic it was read from.
    public var topic: String
    /// Its partition.
    public var partition: Int32
    /// Its offset in the partition.
    public var offset: Int64
    /// The key; nil for a null key.
    public var key: [UInt8]?
    /// The value; nil for a tombstone (null value), distinct from an empty value.
    public var value: [UInt8]?
    /// The headers, in order; a header's value may be nil.
    public var headers: [RecordHeader]
    /// The record's timestamp, when it has one.
    public var timestamp: Date?

    /// Creates a message from its parts.
    public init(topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8]?, headers: [RecordHeader], timestamp: Date?) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }
}
