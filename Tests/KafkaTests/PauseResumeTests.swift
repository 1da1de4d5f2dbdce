import Kafka
import Testing

/// Pausing partitions is the consumer's backpressure.
@Suite struct PauseResumeTests {
    @Test func pauseStopsDeliveryFromAPartitionWhilePollingContinuesAndResumeRestartsIt() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("pause")
        try cluster.createTopic(topic, partitions: 2)
        let paused = TopicPartition(topic: topic, partition: 0)
        let running = TopicPartition(topic: topic, partition: 1)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        let consumer = ConsumerWatcher(try KafkaConsumer(configuration: .forTests(cluster, group: uniqueName("group")), logger: testLogger("consumer")))
        try consumer.consumer.subscribe(topics: [topic])
        try await consumer.waitUntil("both partitions assigned") { $0.assigned == [paused, running] }

        _ = try await producer.send(ProducerRecord(topic: topic, partition: 0, key: nil, value: "before".bytes))
        try await consumer.waitUntil("the first record") { $0.messages.count == 1 }

        try consumer.consumer.pause([paused])
        // Records for the paused partition go first, so without the pause they would arrive first.
        for index in 0..<10 {
            _ = try await producer.send(ProducerRecord(topic: topic, partition: 0, key: nil, value: "paused \(index)".bytes))
        }
        for index in 0..<10 {
            _ = try await producer.send(ProducerRecord(topic: topic, partition: 1, key: nil, value: "running \(index)".bytes))
        }
        try await consumer.waitUntil("the running partition's records") { $0.messages(of: running).count == 10 }
        #expect(consumer.snapshot.messages(of: paused).count == 1)

        try consumer.consumer.resume([paused])
        try await consumer.waitUntil("the paused partition's records after resume") { $0.messages(of: paused).count == 11 }
        #expect(consumer.snapshot.messages(of: paused).map(\.offset) == Array(0..<11))

        await producer.shutdown()
        await consumer.consumer.close()
    }
}
