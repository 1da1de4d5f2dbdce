public import Foundation
public import Records

/// One record read from Kafka.
public struct KafkaMessage: Sendable {
    /// The fields, as a plain value.
    private struct Fields: Sendable {
        var topic: String
        var partition: Int32
        var offset: Int64
        var key: [UInt8]?
        var value: [UInt8]?
        var headers: [RecordHeader]
        var timestamp: Date?
    }

    /// The fields behind one reference (``CopyOnWrite``): a copy (the worker keeps the consumed
    /// record in its work item, hands it to the rules, and keeps it for a dead letter until its
    /// outputs are acknowledged) is one retain instead of one for each of its topic, key, value
    /// and headers.
    private var storage: CopyOnWrite<Fields>

    /// The topic it was read from.
    public var topic: String {
        get { storage.fields.topic }
        set { storage.fields.topic = newValue }
    }

    /// Its partition.
    public var partition: Int32 {
        get { storage.fields.partition }
        set { storage.fields.partition = newValue }
    }

    /// Its offset in the partition.
    public var offset: Int64 {
        get { storage.fields.offset }
        set { storage.fields.offset = newValue }
    }

    /// The key; nil for a null key.
    public var key: [UInt8]? {
        get { storage.fields.key }
        set { storage.fields.key = newValue }
    }

    /// The value; nil for a tombstone (null value), distinct from an empty value.
    public var value: [UInt8]? {
        get { storage.fields.value }
        set { storage.fields.value = newValue }
    }

    /// The headers, in order; a header's value may be nil.
    public var headers: [RecordHeader] {
        get { storage.fields.headers }
        set { storage.fields.headers = newValue }
    }

    /// The record's timestamp, when it has one.
    public var timestamp: Date? {
        get { storage.fields.timestamp }
        set { storage.fields.timestamp = newValue }
    }

    /// Where it was read: its topic, partition and offset.
    public var position: TopicPartitionOffset {
        TopicPartitionOffset(topic: topic, partition: partition, offset: offset)
    }

    /// Creates a message from its parts.
    public init(topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8]?, headers: [RecordHeader], timestamp: Date?) {
        storage = CopyOnWrite(
            Fields(
                topic: topic, partition: partition, offset: offset, key: key, value: value, headers: headers,
                timestamp: timestamp))
    }
}
