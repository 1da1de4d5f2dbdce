public import Dispatcher
public import Kafka

extension TopicSettings {
    /// The topics of this configuration as topics to create: requests, deliveries, launches, dead
    /// letters, metrics and, when configured, the app-states table (compacted: only the latest
    /// state of each device matters).
    public func specifications(partitions: Int32, replicationFactor: Int16 = 1) -> [TopicSpecification] {
        var all = [requests, deliveries, launches, deadLetter, metrics].map {
            TopicSpecification(name: $0, partitions: partitions, replicationFactor: replicationFactor)
        }
        if let appStates {
            all.append(
                TopicSpecification(
                    name: appStates,
                    partitions: partitions,
                    replicationFactor: replicationFactor,
                    config: ["cleanup.policy": "compact"]
                )
            )
        }
        return all
    }
}
