/// A topic to create: name, partitions, replication and topic configuration.
package struct TopicSpecification: Sendable, Hashable {
    /// The topic name.
    package var name: String
    /// The number of partitions.
    package var partitions: Int32
    /// The replication factor.
    package var replicationFactor: Int16 = 1
    /// Topic configuration such as `cleanup.policy=compact`.
    package var config: [String: String] = [:]

    /// Creates a specification.
    package init(name: String, partitions: Int32, replicationFactor: Int16 = 1, config: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.config = config
    }
}
