import Dispatcher
import Testing

/// The settings the worker's guarantees and arithmetic depend on: refused when they would break
/// them, taken from the environment where secrets belong.
@Suite("Configuration: limits and guarded settings")
struct LimitsConfigurationTests {
    /// A mistake and the key path (or variable) the error must name, with words it must say.
    struct Mistake: Sendable, CustomTestStringConvertible {
        let yaml: String
        var environment: [String: String] = [:]
        let path: String
        let says: String
        var testDescription: String { "\(path): \(says)" }
    }

    static let mistakes: [Mistake] = [
        Mistake(yaml: "kafka: {properties: {acks: '1'}}", path: "kafka.properties.acks", says: "acks=all"),
        Mistake(yaml: "kafka: {properties: {enable.idempotence: false}}", path: #"kafka.properties["enable.idempotence"]"#, says: "idempotent"),
        Mistake(yaml: "kafka: {properties: {enable.auto.commit: true}}", path: #"kafka.properties["enable.auto.commit"]"#, says: "committed by the worker"),
        Mistake(yaml: "kafka: {properties: {message.max.bytes: 5000000}}", path: #"kafka.properties["message.max.bytes"]"#, says: "kafka.maxMessageBytes"),
        Mistake(
            yaml: "", environment: ["NOTIFICATION_DISPATCHER_KAFKA_PROPERTIES_ACKS": "0"],
            path: "NOTIFICATION_DISPATCHER_KAFKA_PROPERTIES_ACKS (kafka.properties.acks)", says: "acks=all"),
        Mistake(yaml: "kafka: {maxMessageBytes: 1000}", path: "kafka.maxMessageBytes", says: "16384"),
        Mistake(yaml: "dispatch: {deadline: 11m}", path: "dispatch.deadline", says: "at most 10m"),
        // Far past what nanoseconds in 64 bits hold: refused, never converted.
        Mistake(yaml: "dispatch: {deadline: 9000000000000h}", path: "dispatch.deadline", says: "expected a duration"),
        Mistake(yaml: "dispatch: {expiryGrace: 2m}", path: "dispatch.expiryGrace", says: "at most 1m"),
        Mistake(yaml: "dispatch: {commitInterval: 2000h}", path: "dispatch.commitInterval", says: "at most 24h"),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {SLOW: {deadline: 1h}}}}",
            path: #"apps["com.example.app"].categories.SLOW.deadline"#, says: "at most 10m"),
        Mistake(yaml: "http: {livenessLimit: 30s}", path: "http.livenessLimit", says: "32s"),
        Mistake(
            yaml: "http: {livenessLimit: 2m}\napps: {com.example.app: {deadline: 3m}}", path: "http.livenessLimit",
            says: "longest deadline plus dispatch.expiryGrace (182s)"),
    ]

    @Test("each mistake stops loading, naming the key path and what is wrong", arguments: mistakes)
    func mistake(_ mistake: Mistake) {
        let error = #expect(throws: ConfigurationError.self) {
            try Configuration(yaml: mistake.yaml, environment: mistake.environment)
        }
        #expect(error?.path == mistake.path)
        #expect(error?.description.contains(mistake.says) == true, "\(String(describing: error))")
    }

    @Test("kafka.properties entries come from the environment too, and override the file's")
    func propertiesFromEnvironment() throws {
        let configuration = try Configuration(
            yaml: "kafka: {properties: {security.protocol: SASL_SSL, sasl.username: file}}",
            environment: [
                "NOTIFICATION_DISPATCHER_KAFKA_PROPERTIES_SASL_PASSWORD": "s3cret",
                "NOTIFICATION_DISPATCHER_KAFKA_PROPERTIES_SASL_USERNAME": "environment",
                "NOTIFICATION_DISPATCHER_KAFKA_PROPERTIES_SOME__NAME_X": "1",
                "NOTIFICATION_DISPATCHER_KAFKA_PROPERTIESX": "not a property",
            ])
        #expect(
            configuration.kafka.properties == [
                "security.protocol": "SASL_SSL", "sasl.username": "environment", "sasl.password": "s3cret",
                "some_name.x": "1",
            ])
    }

    @Test("the limits' own bounds are accepted")
    func bounds() throws {
        let configuration = try Configuration(
            yaml: """
                kafka: {maxMessageBytes: 16384}
                dispatch: {deadline: 10m, expiryGrace: 1m, outputRetryLimit: 24h, stalledPartitionLimit: 1h, restoreLimit: 10m}
                http: {livenessLimit: 661s}
                """)
        #expect(configuration.kafka.maxMessageBytes == 16_384)
        #expect(configuration.dispatch.deadline == .seconds(600))
        #expect(configuration.dispatch.outputRetryLimit == .seconds(86_400))
        #expect(configuration.dispatch.stalledPartitionLimit == .seconds(3_600))
        #expect(configuration.dispatch.restoreLimit == .seconds(600))
        #expect(configuration.longestDeadline == .seconds(600))
        let defaults = try Configuration(yaml: "")
        #expect(defaults.kafka.maxMessageBytes == 1_000_000)
        #expect(defaults.dispatch.outputRetryLimit == .seconds(300))
        #expect(defaults.dispatch.stalledPartitionLimit == .seconds(600))
        #expect(defaults.dispatch.restoreLimit == .seconds(120))
    }
}
