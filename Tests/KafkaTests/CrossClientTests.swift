import Foundation
import Kafka
import Records
import TestSupport
import Testing

/// Records cross between this client and kcat (another librdkafka application) unchanged.
@Suite(.enabled(if: Executable.isInstalled("kcat"), "needs kcat on PATH"))
struct CrossClientTests {
    /// Where kcat is installed.
    static let kcat = Executable.require("kcat")

    @Test func kcatReadsWhatSwiftProduced() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("to-kcat")
        try cluster.createTopic(topic, partitions: 3)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        for index in 0..<30 {
            _ = try await producer.send(ProducerRecord(
                topic: topic, key: "key-\(index)".bytes, value: "{\"n\":\(index)}".bytes,
                headers: [RecordHeader(name: "apns-id", value: "id-\(index)")]
            ))
        }
        await producer.shutdown()

        let exit = try await ChildProcess.run(Self.kcat, ["-C", "-b", cluster.bootstrapServers, "-t", topic, "-o", "beginning", "-e", "-J", "-q"])
        #expect(exit.status == 0)
        var seen: [String: (payload: String, headers: [String])] = [:]
        for line in exit.output.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let key = try #require(object["key"] as? String)
            seen[key] = (try #require(object["payload"] as? String), object["headers"] as? [String] ?? [])
        }
        #expect(seen.count == 30)
        for index in 0..<30 {
            #expect(seen["key-\(index)"]?.payload == "{\"n\":\(index)}")
            #expect(seen["key-\(index)"]?.headers == ["apns-id", "id-\(index)"])
        }
    }

    @Test func swiftReadsWhatKcatProduced() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("from-kcat")
        try cluster.createTopic(topic, partitions: 2)
        let input = (0..<20).map { "token-\($0):payload \($0)\n" }.joined()
        let exit = try await ChildProcess.run(
            Self.kcat, ["-P", "-b", cluster.bootstrapServers, "-t", topic, "-K", ":", "-H", "source=kcat"], input: Data(input.utf8)
        )
        #expect(exit.status == 0)

        let consumer = try KafkaConsumer(configuration: .forTests(cluster, group: uniqueName("group")), logger: testLogger("consumer"))
        try consumer.subscribe(topics: [topic])
        let messages = try await recordEvents(consumer) { $0.messages.count >= 20 }.messages
        await consumer.close()

        #expect(messages.count == 20)
        let byKey = Dictionary(messages.map { ($0.key?.text ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        for index in 0..<20 {
            let message = try #require(byKey["token-\(index)"])
            #expect(message.value?.text == "payload \(index)")
            #expect(message.headers == [RecordHeader(name: "source", value: "kcat")])
        }
    }
}
