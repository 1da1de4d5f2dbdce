import Kafka
import Records
import TestSupport
import Testing

/// ``KafkaConsumer/rewind(_:timeout:)``: an exactly-once worker's way back to its last commit
/// after an aborted transaction.
@Suite struct RewindTests {
    @Test func aRewoundPartitionIsReadAgainFromItsNewPositionAfterTheRewoundEventAndTheOthersGoOn() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("rewind")
        try cluster.createTopic(topic, partitions: 2)
        let rewound = TopicPartition(topic: topic, partition: 0)
        let other = TopicPartition(topic: topic, partition: 1)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        let consumer = ConsumerWatcher(try KafkaConsumer(configuration: .forTests(cluster, group: uniqueName("group")), logger: testLogger("consumer")))
        try consumer.consumer.subscribe(topics: [topic])
        try await consumer.waitUntil("both partitions assigned") { $0.assigned == [rewound, other] }
        for partition in [rewound, other] {
            let reports = await producer.send((0..<10).map { ProducerRecord(topic: topic, partition: partition.partition, key: nil, value: "\($0)".bytes) })
            for report in reports { _ = try report.get() }
        }
        try await consumer.waitUntil("every record") { $0.messages.count == 20 }

        // While the intake is held, as the worker holds it during a rewind: the poll thread still serves it.
        consumer.consumer.holdIntake(true)
        try await consumer.consumer.rewind([TopicPartitionOffset(topic: topic, partition: 0, offset: 3)], timeout: .seconds(10))
        consumer.consumer.holdIntake(false)
        _ = try await producer.send(ProducerRecord(topic: topic, partition: 1, key: nil, value: "after".bytes))
        try await consumer.waitUntil("the rewound partition's records again") { $0.messages.count == 28 }

        let seen = consumer.snapshot
        #expect(seen.rewound.map(\.partitions) == [[rewound]])
        #expect(seen.rewound.first?.after == 20, "reported after the messages fetched before it")
        #expect(seen.messages(of: rewound).map(\.offset) == Array(0..<10) + Array(3..<10))
        #expect(seen.messages(of: other).map(\.offset) == Array(0..<11), "the other partition goes on from where it was")

        // A partition not assigned cannot be moved.
        await #expect(throws: KafkaError.self) {
            try await consumer.consumer.rewind([TopicPartitionOffset(topic: topic, partition: 7, offset: 0)], timeout: .seconds(5))
        }
        await producer.shutdown()
        await consumer.consumer.close()
        await #expect(throws: KafkaError.self) {
            try await consumer.consumer.rewind([TopicPartitionOffset(topic: topic, partition: 0, offset: 0)], timeout: .seconds(5))
        }
    }
}
