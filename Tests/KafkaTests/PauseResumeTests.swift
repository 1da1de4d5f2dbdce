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

/// Holding the intake is the worker's backpressure: nothing polled meanwhile, nothing lost after.
@Suite struct IntakeHoldTests {
    @Test func recordsProducedWhileTheIntakeIsHeldArriveOnceAndInOrderAfterItRestarts() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("hold")
        try cluster.createTopic(topic, partitions: 2)
        let partitions = [TopicPartition(topic: topic, partition: 0), TopicPartition(topic: topic, partition: 1)]
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        let consumer = ConsumerWatcher(try KafkaConsumer(configuration: .forTests(cluster, group: uniqueName("group")), logger: testLogger("consumer")))
        try consumer.consumer.subscribe(topics: [topic])
        try await consumer.waitUntil("both partitions assigned") { $0.assigned == Set(partitions) }
        _ = try await producer.send(ProducerRecord(topic: topic, partition: 0, key: nil, value: "before".bytes))
        try await consumer.waitUntil("the first record") { $0.messages.count == 1 }

        consumer.consumer.holdIntake(true)
        let records = (0..<1_000).map { index in
            ProducerRecord(topic: topic, partition: Int32(index % 2), key: nil, value: "held \(index)".bytes)
        }
        let failures = await producer.send(records).filter { if case .failure = $0 { true } else { false } }
        #expect(failures.isEmpty)
        // A commit issued while held completes once polling restarts (its result comes through polling).
        async let committed: Void = consumer.consumer.commit([TopicPartitionOffset(topic: topic, partition: 0, offset: 1)])
        consumer.consumer.holdIntake(false)
        try await committed

        try await consumer.waitUntil("every record after the restart") { $0.messages.count == 1_001 }
        #expect(consumer.snapshot.messages(of: partitions[0]).map(\.offset) == Array(0..<501))
        #expect(consumer.snapshot.messages(of: partitions[1]).map(\.offset) == Array(0..<500))
        await producer.shutdown()
        await consumer.consumer.close()
    }
}
