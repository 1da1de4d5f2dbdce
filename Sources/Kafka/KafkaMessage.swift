public import Foundation
public import Records

/// One record read from Kafka.
public struct KafkaMessage: Sendable {
    /// The fields, as a plain value.
    @usableFromInline
    struct Fields: Sendable {
        @usableFromInline var topic: String
        @usableFromInline var partition: Int32
        @usableFromInline var offset: Int64
        @usableFromInline var key: RecordBytes?
        @usableFromInline var value: RecordBytes?
        @usableFromInline var headers: [RecordHeader]
        @usableFromInline var timestamp: Date?
    }

    /// The fields behind one reference (``CopyOnWrite``): a copy (the worker keeps the consumed
    /// record in its work item, hands it to the rules, and keeps it for a dead letter until its
    /// outputs are acknowledged) is one retain instead of one for each of its topic, key, value
    /// and headers.
    ///
    /// The accessors are `@inlinable`: the worker reads a message's topic and partition several
    /// times per record from another module, and each read was a call.
    @usableFromInline var storage: CopyOnWrite<Fields>

    /// The topic it was read from.
    @inlinable
    public var topic: String {
        get { storage.fields.topic }
        set { storage.fields.topic = newValue }
    }

    /// Its partition.
    @inlinable
    public var partition: Int32 {
        get { storage.fields.partition }
        set { storage.fields.partition = newValue }
    }

    /// Its offset in the partition.
    @inlinable
    public var offset: Int64 {
        get { storage.fields.offset }
        set { storage.fields.offset = newValue }
    }

    /// The key; nil for a null key. A view of the record's one buffer.
    @inlinable
    public var key: RecordBytes? {
        get { storage.fields.key }
        set { storage.fields.key = newValue }
    }

    /// The value; nil for a tombstone (null value), distinct from an empty value. A view of the
    /// record's one buffer.
    @inlinable
    public var value: RecordBytes? {
        get { storage.fields.value }
        set { storage.fields.value = newValue }
    }

    /// The headers, in order; a header's value may be nil.
    @inlinable
    public var headers: [RecordHeader] {
        get { storage.fields.headers }
        set { storage.fields.headers = newValue }
    }

    /// The record's timestamp, when it has one.
    @inlinable
    public var timestamp: Date? {
        get { storage.fields.timestamp }
        set { storage.fields.timestamp = newValue }
    }

    /// Where it was read: its topic, partition and offset.
    public var position: TopicPartitionOffset {
        TopicPartitionOffset(topic: topic, partition: partition, offset: offset)
    }

    /// Creates a message from its parts.
    package init(
        topic: String, partition: Int32, offset: Int64, key: RecordBytes?, value: RecordBytes?,
        headers: [RecordHeader], timestamp: Date?
    ) {
        storage = CopyOnWrite(
            Fields(
                topic: topic, partition: partition, offset: offset, key: key, value: value, headers: headers,
                timestamp: timestamp))
    }

    /// Creates a message from its parts, given as arrays (kept as they are, not copied).
    @_disfavoredOverload
    package init(topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8]?, headers: [RecordHeader], timestamp: Date?) {
        self.init(
            topic: topic, partition: partition, offset: offset, key: key.map { RecordBytes($0) }, value: value.map { RecordBytes($0) },
            headers: headers, timestamp: timestamp)
    }
}

extension KafkaMessage {
    /// The record `copy` holds, as a message of its own: the owned form, for a record kept as a
    /// copy that then goes the owned way (it waits on an extension, or its output failed).
    public init(_ copy: RecordCopy) {
        self = copy.withView { MessageDecoder.copy($0, topic: copy.topic) }
    }
}
