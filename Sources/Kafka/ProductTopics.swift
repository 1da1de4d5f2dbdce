/// The product's topics with their default names and settings (the configuration overrides the names later).
public enum ProductTopics {
    /// Incoming notification requests.
    public static let requests = "notifications.requests"
    /// Delivered notifications.
    public static let deliveries = "notifications.deliveries"
    /// App launches caused by notifications.
    public static let launches = "notifications.launches"
    /// Requests that could not be processed.
    public static let deadLetter = "notifications.dead-letter"
    /// Metrics records.
    public static let metrics = "notifications.metrics"
    /// Per-device app state; compacted (latest state per key).
    public static let appStates = "notifications.app-states"

    /// Every product topic, with `partitions` partitions; the app-states topic is compacted.
    public static func specifications(partitions: Int32, replicationFactor: Int16 = 1) -> [TopicSpecification] {
        [requests, deliveries, launches, deadLetter, metrics].map {
            TopicSpecification(name: $0, partitions: partitions, replicationFactor: replicationFactor)
        } + [
            TopicSpecification(name: appStates, partitions: partitions, replicationFactor: replicationFactor, config: ["cleanup.policy": "compact"])
        ]
    }
}
