import Kafka
import Records
import Testing
import TestSupport

/// The producer rides out broker outages and retriable request errors (fault injection on the embedded broker).
@Suite struct FaultInjectionTests {
    @Test func recordsProducedWhileTheLeaderIsDownAreDeliveredWhenItReturns() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 3)
        defer { cluster.shutdown() }
        let topic = uniqueName("outage")
        try cluster.createTopic(topic, partitions: 1)
        try cluster.setPartitionLeader(topic: topic, partition: 0, broker: 2)
        #expect(try await cluster.leader(topic: topic, partition: 0) == 2)
        #expect(try await cluster.leader(topic: topic, partition: 5) == nil)
        // The records wait for the leader for as long as the test takes to bring it back: on a
        // loaded machine that took longer than the default delivery timeout (30 s), and they
        // timed out. What is tested is delivery once the leader returns, not the timeout.
        var configuration = ProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        configuration.deliveryTimeout = .seconds(600)
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger("producer"))
        _ = try await producer.send(ProducerRecord(topic: topic, key: "warm-up".bytes, value: "0".bytes))

        try cluster.setBrokerDown(2)
        let reports = try await withThrowingTaskGroup(of: DeliveryReport.self) { group in
            for index in 1...100 {
                group.addTask { try await producer.send(ProducerRecord(topic: topic, key: "key-\(index)".bytes, value: "\(index)".bytes)) }
            }
            try await eventually("records queued while the leader is down") { producer.queuedCount >= 100 }
            // Nothing can be delivered now: a bounded flush must time out rather than succeed.
            await #expect(throws: KafkaError.self) { try await producer.flush(timeout: .milliseconds(300)) }
            try cluster.setBrokerUp(2)
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(reports.count == 100)
        #expect(Set(reports.map(\.offset)).count == 100)
        await producer.shutdown()

        let consumer = try KafkaConsumer(configuration: .forTests(cluster, group: uniqueName("group")), logger: testLogger("consumer"))
        try consumer.subscribe(topics: [topic])
        let recorder = try await recordEvents(consumer) { $0.messages.count >= 101 }
        await consumer.close()
        #expect(Set(recorder.messages.compactMap { $0.value?.text }) == Set((0...100).map(String.init)))
        #expect(recorder.messages.count == 101)
    }

    @Test func aRetriableProduceErrorIsRetriedAndANonRetriableOneIsReported() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("request-errors")
        try cluster.createTopic(topic, partitions: 1)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        _ = try await producer.send(ProducerRecord(topic: topic, key: nil, value: "warm-up".bytes))

        try cluster.pushRequestErrors(apiKey: Self.produceAPIKey, [Self.notEnoughReplicas, Self.notEnoughReplicas, Self.notEnoughReplicas])
        let report = try await producer.send(ProducerRecord(topic: topic, key: nil, value: "retried".bytes))
        #expect(report.offset == 1)

        try cluster.pushRequestErrors(apiKey: Self.produceAPIKey, [Self.topicAuthorizationFailed])
        let error = await #expect(throws: KafkaError.self) {
            try await producer.send(ProducerRecord(topic: topic, key: nil, value: "refused".bytes))
        }
        #expect(error?.code == Self.topicAuthorizationFailed)
        #expect(error?.isRetriable == false)
        await producer.shutdown()
    }

    @Test func aFullLocalQueueMakesSendWaitInsteadOfFail() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("queue-full")
        try cluster.createTopic(topic, partitions: 2)
        var configuration = ProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        configuration.properties = ["queue.buffering.max.messages": "10"]
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger("producer"))
        let reports = try await withThrowingTaskGroup(of: DeliveryReport.self) { group in
            for index in 0..<2_000 {
                group.addTask { try await producer.send(ProducerRecord(topic: topic, key: "\(index)".bytes, value: "\(index)".bytes)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(reports.count == 2_000)
        #expect(Set(reports.map { "\($0.partition):\($0.offset)" }).count == 2_000)
        await producer.shutdown()
    }

    @Test func sendAfterShutdownFailsAndShutdownIsIdempotent() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        await producer.shutdown()
        await producer.shutdown()
        await #expect(throws: KafkaError.self) {
            try await producer.send(ProducerRecord(topic: "after-shutdown", key: nil, value: []))
        }
        #expect(producer.queuedCount == 0)
    }

    /// Kafka's Produce API key.
    static let produceAPIKey: Int16 = 0
    /// `NOT_ENOUGH_REPLICAS`: retriable.
    static let notEnoughReplicas: Int32 = 19
    /// `TOPIC_AUTHORIZATION_FAILED`: not retriable.
    static let topicAuthorizationFailed: Int32 = 29
}
