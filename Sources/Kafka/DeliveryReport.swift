/// Where the broker stored a produced record.
public struct DeliveryReport: Sendable, Hashable {
    /// The record's topic.
    public var topic: String
    /// The partition it was written to.
    public var partition: Int32
    /// Its offset in that partition.
    public var offset: Int64

    /// Creates a delivery report.
    package init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }
}
