import Kafka
import Testing

/// Creating topics through the admin API.
@Suite struct AdminTests {
    @Test func withoutAControllerCreatingTopicsFailsWithATypedRetriableTimeout() async throws {
        // librdkafka 2.0.2's mock cluster names controller 0, which is no broker: CreateTopics cannot
        // be sent there, so the admin path is checked up to its typed failure (topics on the embedded
        // broker are created with `EmbeddedKafkaCluster.createTopic`).
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let admin = try KafkaAdmin(bootstrapServers: cluster.bootstrapServers, logger: testLogger("admin"))
        let error = await #expect(throws: KafkaError.self) {
            try await admin.createTopics([TopicSpecification(name: uniqueName("t"), partitions: 3)], timeout: .seconds(1))
        }
        #expect(error?.name == "_TIMED_OUT")
        #expect(error?.isRetriable == true)
        try await admin.createTopics([], timeout: .seconds(1))
    }

    @Test func theEmbeddedClusterCreatesTopicsFromSpecificationsAndRefusesDuplicates() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 3)
        defer { cluster.shutdown() }
        let topic = uniqueName("created")
        try cluster.createTopics([TopicSpecification(name: topic, partitions: 7, config: ["cleanup.policy": "compact"])])
        #expect(throws: KafkaError.self) { try cluster.createTopic(topic, partitions: 7) }

        // The seventh partition exists (an auto-created topic would have fewer); an eighth does not.
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        let report = try await producer.send(ProducerRecord(topic: topic, partition: 6, key: nil, value: "last".bytes))
        #expect(report.partition == 6)
        let error = await #expect(throws: KafkaError.self) {
            try await producer.send(ProducerRecord(topic: topic, partition: 7, key: nil, value: "beyond".bytes))
        }
        #expect(error?.name == "_UNKNOWN_PARTITION")
        await producer.shutdown()

        cluster.shutdown()
        #expect(throws: KafkaError.self) { try cluster.createTopic(uniqueName("late"), partitions: 1) }
    }

    @Test func aRejectedPropertyIsATypedError() throws {
        let error = #expect(throws: KafkaError.self) {
            _ = try KafkaAdmin(bootstrapServers: "127.0.0.1:1", properties: ["no.such.property": "1"])
        }
        #expect(error?.name == "_INVALID_ARG")
        #expect(error?.message.contains("no.such.property") == true)
    }
}
