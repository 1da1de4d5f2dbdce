/// Where a record came from: its topic, partition and offset.
public struct RecordSource: Sendable, Hashable {
    /// The Kafka topic (offline: the configured requests topic).
    public var topic: String
    /// The partition (offline: 0).
    public var partition: Int32
    /// The offset (offline: the input line's number counting from 0).
    public var offset: Int64

    /// Makes a source.
    public init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }
}
