public import Dispatcher

/// The topics the product reads and writes, with the settings each needs when created.
public enum ProductTopics {
    /// A topic to create.
    public struct Topic: Sendable, Hashable {
        /// The topic's name.
        public var name: String
        /// Topic configuration, e.g. `cleanup.policy=compact` for the app-states table.
        public var config: [String: String]
    }

    /// Every topic of the configuration: requests, deliveries, launches, dead letters, metrics and,
    /// when configured, the compacted app-states topic.
    public static func names(_ topics: TopicSettings) -> [Topic] {
        var all = [topics.requests, topics.deliveries, topics.launches, topics.deadLetter, topics.metrics]
            .map { Topic(name: $0, config: [:]) }
        if let appStates = topics.appStates {
            all.append(Topic(name: appStates, config: ["cleanup.policy": "compact"]))
        }
        return all
    }
}
