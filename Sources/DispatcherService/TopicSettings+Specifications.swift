package import Dispatcher
package import Kafka

extension TopicSettings {
    /// The app-states topic's name where a command creates every product topic (`broker`, `dev`).
    package static let defaultAppStates = "notifications.app-states"

    /// Every product topic with its default name, the app-states topic included.
    package static var product: TopicSettings {
        var topics = TopicSettings()
        topics.appStates = defaultAppStates
        return topics
    }

    /// The topics of this configuration as topics to create: requests, deliveries, launches, dead
    /// letters, metrics, responses, actions, feedback, the workers' internal activity-repartition
    /// topic and, when configured, the app-states and devices tables, and the channels, activities
    /// and stored tables the rules of SEMANTICS sections 14 to 16 read and write, and the badge
    /// ledger of section 21 (compacted: only the latest entry of each key matters). All have
    /// `partitions` partitions: the worker needs the requests, devices, activity-repartition,
    /// activities, stored and badges topics co-partitioned.
    package func specifications(partitions: Int32, replicationFactor: Int16 = 1) -> [TopicSpecification] {
        var all = [requests, deliveries, launches, deadLetter, metrics, responses, actions, feedback, activityRepartition].map {
            TopicSpecification(name: $0, partitions: partitions, replicationFactor: replicationFactor)
        }
        for table in [appStates, devices, channels, activities, stored, badges].compactMap({ $0 }) {
            all.append(
                TopicSpecification(
                    name: table,
                    partitions: partitions,
                    replicationFactor: replicationFactor,
                    config: ["cleanup.policy": "compact"]
                )
            )
        }
        return all
    }
}
