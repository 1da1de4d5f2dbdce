import Foundation
import Kafka
import Records
import TestSupport
import Testing

/// The Kafka module against a real Kafka-protocol broker (Tansu), not librdkafka's own mock: the
/// handshake that librdkafka 2.0.2 could not get past, topic creation through the admin API,
/// keyed records with headers, and a consumer group's committed offsets.
@Suite("Kafka client on a real broker (Tansu)", .enabled(if: TansuBroker.isInstalled, "needs Tansu: scripts/install-tansu"))
struct RealBrokerClientTests {
    @Test func createsTopicsProducesConsumesAndCommitsOnTansu() async throws {
        try await TansuBroker.with { broker in
            let topic = uniqueName("real")
            let admin = try KafkaAdmin(bootstrapServers: broker.bootstrapServers, logger: testLogger("admin"))
            try await admin.createTopics([TopicSpecification(name: topic, partitions: 3)], timeout: .seconds(20))

            let producer = try KafkaProducer(
                configuration: ProducerConfiguration(bootstrapServers: broker.bootstrapServers), logger: testLogger("producer"))
            var reports: [DeliveryReport] = []
            for sequence in 0..<300 {
                let record = ProducerRecord(
                    topic: topic, key: "key-\(sequence % 10)".bytes, value: "value-\(sequence)".bytes,
                    headers: [RecordHeader(name: "sequence", value: String(sequence))])
                reports.append(try await producer.send(record))
            }
            await producer.shutdown()
            #expect(Set(reports.map(\.partition)).isSubset(of: [0, 1, 2]))

            let group = uniqueName("group")
            var configuration = ConsumerConfiguration(bootstrapServers: broker.bootstrapServers, groupID: group)
            configuration.properties = ["fetch.wait.max.ms": "10"]
            let consumer = try KafkaConsumer(configuration: configuration, logger: testLogger("consumer"))
            try consumer.subscribe(topics: [topic])
            let messages = try await recordEvents(consumer) { $0.messages.count >= 300 }.messages
            #expect(messages.count == 300)
            #expect(Set(messages.compactMap { $0.value?.text }) == Set((0..<300).map { "value-\($0)" }))
            // Each key's records come back in the order they were sent.
            for key in 0..<10 {
                let values = messages.filter { $0.key?.text == "key-\(key)" }.compactMap { $0.value?.text }
                #expect(values == stride(from: key, to: 300, by: 10).map { "value-\($0)" })
            }
            let ends = Dictionary(grouping: reports, by: \.partition).mapValues { $0.map(\.offset).max()! + 1 }
            let offsets = ends.map { TopicPartitionOffset(topic: topic, partition: $0.key, offset: $0.value) }
            try await consumer.commit(offsets)
            let committed = try await consumer.committed(ends.keys.map { TopicPartition(topic: topic, partition: $0) }, timeout: .seconds(10))
            #expect(Dictionary(uniqueKeysWithValues: committed.map { ($0.partition, $0.offset) }) == ends)
            await consumer.close()
        }
    }
}
