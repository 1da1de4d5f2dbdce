import Kafka
import Records
import Synchronization
import Testing
import TestSupport

/// Reading a whole (compacted) topic outside any group.
@Suite struct TopicReaderTests {
    @Test func readerReadsEveryPartitionFromTheBeginningReportsCaughtUpAndKeepsReading() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("app-states")
        try cluster.createTopic(topic, partitions: 3, config: ["cleanup.policy": "compact"])
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        for index in 0..<30 {
            _ = try await producer.send(ProducerRecord(topic: topic, key: "device-\(index)".bytes, value: "state-\(index)".bytes))
        }
        _ = try await producer.send(ProducerRecord(topic: topic, key: "device-0".bytes, value: nil))

        let reader = try KafkaTopicReader(configuration: .forTests(cluster, group: "ignored"), topic: topic, logger: testLogger("reader"))
        let afterCatchUp = try await withTimeLimit(.seconds(60), "the reader") {
            var latest: [String: RecordBytes?] = [:]
            var messagesAtCatchUp: Int?
            var count = 0
            for await event in reader.events {
                switch event {
                case .messages(let messages):
                    count += messages.count
                    for message in messages { latest[message.key?.text ?? ""] = .some(message.value) }
                case .caughtUp:
                    messagesAtCatchUp = count
                    _ = try await producer.send(ProducerRecord(topic: topic, key: "device-99".bytes, value: "late".bytes))
                case .error, .assigned, .revoked, .lost, .statistics, .lent, .rewound:
                    continue
                }
                if latest["device-99"] != nil { break }
            }
            return (messagesAtCatchUp, latest)
        }
        #expect(afterCatchUp.0 == 31)
        #expect(afterCatchUp.1.count == 31)
        #expect(afterCatchUp.1["device-0"] == .some(nil))
        #expect(afterCatchUp.1["device-7"] == .some("state-7".bytes))
        #expect(afterCatchUp.1["device-99"] == .some("late".bytes))
        await reader.close()
        await producer.shutdown()
    }

    @Test func anEmptyTopicIsCaughtUpAtOnce() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("empty")
        try cluster.createTopic(topic, partitions: 2)
        let reader = try KafkaTopicReader(configuration: .forTests(cluster, group: "ignored"), topic: topic, logger: testLogger("reader"))
        let caughtUp = try await withTimeLimit(.seconds(60), "caught up") {
            for await event in reader.events {
                if case .caughtUp = event { return true }
            }
            return false
        }
        #expect(caughtUp)
        await reader.close()
    }
}
