/// An offset in one partition of one topic.
///
/// Committed offsets follow the Kafka convention: the *next* offset to read (last one done + 1).
public struct TopicPartitionOffset: Sendable, Hashable {
    /// The topic name.
    public var topic: String
    /// The partition number within the topic.
    public var partition: Int32
    /// The offset (for commits: the next offset to read).
    public var offset: Int64

    /// Creates a topic-partition-offset triple.
    public init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }

    /// The partition this offset belongs to.
    public var topicPartition: TopicPartition { TopicPartition(topic: topic, partition: partition) }
}
