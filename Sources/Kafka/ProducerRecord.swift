public import Records
/// One record to produce.
public struct ProducerRecord: Sendable {
    /// The topic to write to.
    public var topic: String
    /// The partition; `nil` lets the partitioner choose by key.
    public var partition: Int32?
    /// The key; `nil` is Kafka's null key.
    public var key: [UInt8]?
    /// The value; `nil` is a tombstone (null value), distinct from an empty value.
    public var value: [UInt8]?
    /// The headers, in order.
    public var headers: [RecordHeader]

    /// Creates a record.
    public init(topic: String, partition: Int32? = nil, key: [UInt8]?, value: [UInt8]?, headers: [RecordHeader] = []) {
        self.topic = topic
        self.partition = partition
        self.key = key
        self.value = value
        self.headers = headers
    }
}
