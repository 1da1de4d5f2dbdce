public import Records
/// One record to produce.
public struct ProducerRecord: Sendable {
    /// The topic to write to.
    public var topic: String
    /// The partition; `nil` lets the partitioner choose by key.
    public var partition: Int32?
    /// The key; `nil` is Kafka's null key. A view, so that an output can carry its request's key
    /// (a view of the consumed record's buffer) without copying it.
    public var key: RecordBytes?
    /// The value; `nil` is a tombstone (null value), distinct from an empty value.
    public var value: RecordBytes?
    /// The headers, in order.
    public var headers: [RecordHeader]

    /// Creates a record. `@inlinable`: built in place by the caller, where a call into this module
    /// returned it through a copy (a retain and a release of each of its references, per output).
    @inlinable
    public init(
        topic: String, partition: Int32? = nil, key: RecordBytes?, value: RecordBytes?, headers: [RecordHeader] = []
    ) {
        self.topic = topic
        self.partition = partition
        self.key = key
        self.value = value
        self.headers = headers
    }

    /// Creates a record from arrays (kept as they are, not copied).
    @_disfavoredOverload
    public init(topic: String, partition: Int32? = nil, key: [UInt8]?, value: [UInt8]?, headers: [RecordHeader] = []) {
        self.init(topic: topic, partition: partition, key: key.map { RecordBytes($0) }, value: value.map { RecordBytes($0) }, headers: headers)
    }
}
