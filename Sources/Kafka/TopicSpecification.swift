/// A topic to create: name, partitions, replication and topic configuration.
public struct TopicSpecification: Sendable, Hashable {
    /// The topic name.
    public var name: String
    /// The number of partitions.
    public var partitions: Int32
    /// The replication factor.
    public var replicationFactor: Int16 = 1
    /// Topic configuration such as `cleanup.policy=compact`.
    public var config: [String: String] = [:]

    /// Creates a specification.
    public init(name: String, partitions: Int32, replicationFactor: Int16 = 1, config: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.config = config
    }
}
