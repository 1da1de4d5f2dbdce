/// The whole configuration of the dispatcher, as loaded from the YAML file and the environment.
public struct Configuration: Sendable, Hashable {
    /// The `kafka` section.
    public var kafka = KafkaSettings()
    /// The `topics` section.
    public var topics = TopicSettings()
    /// The `dispatch` section.
    public var dispatch = DispatchSettings()
    /// The `apps` section, keyed by bundle ID; empty allows every topic.
    public var apps: [String: AppSettings] = [:]
    /// The `metrics` section.
    public var metrics = MetricsSettings()
    /// The `http` section.
    public var http = HTTPSettings()

    /// Every default, no apps.
    public init() {}
}
