import Kafka
import Testing
import TestSupport

/// One set of `kafka.properties` configures consumers and producers alike; each client takes only
/// what is its own, so a clean start logs no `CONFWARN`.
@Suite struct PropertyScopeTests {
    static let shared: [String: String] = [
        // The consumer's (the three), the producer's, and one for both.
        "session.timeout.ms": "6000", "heartbeat.interval.ms": "500", "fetch.wait.max.ms": "10",
        "linger.ms": "2", "compression.type": "lz4", "socket.keepalive.enable": "true",
    ]

    @Test func aProducerAConsumerAndAnAdminGivenTheSamePropertiesLogNoConfigurationWarning() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let logs = CapturedLogs()
        var producerConfiguration = ProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        producerConfiguration.properties = Self.shared
        let producer = try KafkaProducer(configuration: producerConfiguration, logger: logs.logger(label: "producer"))
        var consumerConfiguration = ConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupID: uniqueName("group"))
        consumerConfiguration.properties = Self.shared
        let consumer = try KafkaConsumer(configuration: consumerConfiguration, logger: logs.logger(label: "consumer"))
        let admin = try KafkaAdmin(bootstrapServers: cluster.bootstrapServers, properties: Self.shared, logger: logs.logger(label: "admin"))
        _ = admin
        let topic = uniqueName("scope")
        try cluster.createTopic(topic, partitions: 1)
        // A record through both clients: they started and talked to the broker with these settings.
        _ = try await producer.send(ProducerRecord(topic: topic, key: nil, value: "x".bytes))
        try consumer.subscribe(topics: [topic])
        let received = try await recordEvents(consumer) { !$0.messages.isEmpty }
        #expect(received.messages.count == 1)
        await producer.shutdown()
        await consumer.close()
        let warnings = logs.entries.filter { $0.message.contains("CONFWARN") || $0.metadata.values.contains("CONFWARN") }
        #expect(warnings.isEmpty, "\(warnings)")
    }
}

/// KIP-714 client metrics are off in every client of the dispatcher, unless `properties` say otherwise.
@Suite struct ClientMetricsPushTests {
    /// The value librdkafka ends up with: the last setting of the property wins.
    static func lastValue(_ name: String, in properties: [(String, String)]) -> String? {
        properties.last { $0.0 == name }?.1
    }

    @Test func offByDefaultForConsumersAndProducersAndPropertiesCanTurnItOn() {
        var consumer = ConsumerConfiguration(bootstrapServers: "127.0.0.1:9092", groupID: "group")
        var producer = ProducerConfiguration(bootstrapServers: "127.0.0.1:9092")
        #expect(Self.lastValue("enable.metrics.push", in: consumer.librdkafkaProperties) == "false")
        #expect(Self.lastValue("enable.metrics.push", in: producer.librdkafkaProperties) == "false")
        consumer.properties["enable.metrics.push"] = "true"
        producer.properties["enable.metrics.push"] = "true"
        #expect(Self.lastValue("enable.metrics.push", in: consumer.librdkafkaProperties) == "true")
        #expect(Self.lastValue("enable.metrics.push", in: producer.librdkafkaProperties) == "true")
    }
}
