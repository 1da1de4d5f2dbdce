import Dispatcher
import DispatcherService
import Kafka
import Testing

/// `WorkerSettings` built directly (tests, benchmarks) and from an empty configuration agree:
/// each default is written once, in the `dispatch` section's model.
@Suite struct WorkerSettingsTests {
    @Test func settingsBuiltDirectlyHaveTheDispatchSectionsDefaults() {
        let configured = WorkerSettings(configuration: Configuration())
        let direct = WorkerSettings(consumer: configured.consumer, producer: configured.producer, requestsTopic: configured.requestsTopic)
        let defaults = DispatchSettings()
        #expect(direct.maxInFlight == defaults.maxInFlight && configured.maxInFlight == defaults.maxInFlight)
        #expect(direct.maxBufferedBytes == defaults.maxBufferedBytes && configured.maxBufferedBytes == defaults.maxBufferedBytes)
        #expect(direct.resumeRatio == defaults.resumeRatio && configured.resumeRatio == defaults.resumeRatio)
        #expect(direct.commitInterval == defaults.commitInterval && configured.commitInterval == defaults.commitInterval)
        #expect(direct.outputRetryLimit == defaults.outputRetryLimit && configured.outputRetryLimit == defaults.outputRetryLimit)
        #expect(direct.stalledPartitionLimit == defaults.stalledPartitionLimit && configured.stalledPartitionLimit == defaults.stalledPartitionLimit)
        #expect(direct.restoreLimit == defaults.restoreLimit && configured.restoreLimit == defaults.restoreLimit)
        #expect(direct.ordering == defaults.ordering && configured.ordering == defaults.ordering)
        #expect(direct.guarantee == defaults.guarantee && configured.guarantee == defaults.guarantee)
        // 30 s deadline + 2 s grace + 5 s margin.
        #expect(direct.drainLimit == configured.drainLimit && direct.drainLimit == .seconds(37))
    }

    @Test("kafka.properties.partitioner is the partitioner the worker places keys by, as librdkafka's producer does")
    func partitionerProperty() {
        #expect(WorkerSettings(configuration: Configuration()).producer.partitioner == "murmur2_random")
        var configuration = Configuration()
        configuration.kafka.properties["partitioner"] = "consistent_random"
        let settings = WorkerSettings(configuration: configuration)
        #expect(settings.producer.partitioner == "consistent_random")
        #expect(settings.producer.librdkafkaProperties.last { $0.0 == "partitioner" }?.1 == "consistent_random")
    }
}
