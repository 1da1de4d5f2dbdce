/// A position in one partition of one topic: where a record came from, or an offset to commit.
///
/// Committed offsets follow the Kafka convention: the *next* offset to read (last one done + 1).
/// Offline (`dispatch`, `explain`), a record's position is the configured requests topic,
/// partition 0, and the input line's number counting from 0.
public struct TopicPartitionOffset: Sendable, Hashable {
    /// The topic name.
    public var topic: String
    /// The partition number within the topic.
    public var partition: Int32
    /// The offset (of a record: its own; for commits: the next offset to read).
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
