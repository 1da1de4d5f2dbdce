import Foundation
import Kafka
import Records
import Testing
import TestSupport

/// Producing and consuming records through the embedded broker.
@Suite struct ProduceConsumeTests {
    @Test func tenThousandKeyedRecordsWithHeadersComeBackIntactAndInKeyOrder() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 3)
        defer { cluster.shutdown() }
        let topic = uniqueName("round-trip")
        try cluster.createTopic(topic, partitions: 6)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        let keys = 100
        let perKey = 100

        // Each key's records are sent one after another (order is per key); keys run concurrently.
        let reports = try await withThrowingTaskGroup(of: [DeliveryReport].self) { group in
            for key in 0..<keys {
                group.addTask {
                    var reports: [DeliveryReport] = []
                    for sequence in 0..<perKey {
                        reports.append(try await producer.send(Self.record(topic: topic, key: key, sequence: sequence)))
                    }
                    return reports
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(reports.count == keys * perKey)
        await producer.shutdown()

        let consumer = try KafkaConsumer(configuration: .forTests(cluster, group: uniqueName("group")), logger: testLogger("consumer"))
        try consumer.subscribe(topics: [topic])
        let recorder = try await recordEvents(consumer) { $0.messages.count >= keys * perKey }
        await consumer.close()

        #expect(recorder.messages.count == keys * perKey)
        var sequences: [String: [Int]] = [:]
        for message in recorder.messages {
            let key = try #require(message.key).text
            let value = try #require(message.value).text
            let sequence = try #require(Int(value.split(separator: ":").last ?? ""))
            #expect(value == "value-\(key):\(sequence)")
            #expect(message.headers == Self.headers(sequence: sequence))
            #expect(message.timestamp != nil)
            sequences[key, default: []].append(sequence)
        }
        #expect(sequences.count == keys)
        for (key, received) in sequences {
            #expect(received == Array(0..<perKey), "key \(key) out of order or incomplete")
        }
    }

    @Test func tombstonesEmptyValuesAndNullKeysSurvive() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("tombstones")
        try cluster.createTopic(topic, partitions: 1)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        _ = try await producer.send(ProducerRecord(topic: topic, key: "gone".bytes, value: nil))
        _ = try await producer.send(ProducerRecord(topic: topic, key: "empty".bytes, value: [], headers: [RecordHeader(name: "h", value: [])]))
        _ = try await producer.send(ProducerRecord(topic: topic, key: nil, value: "no key".bytes))
        await producer.shutdown()

        let consumer = try KafkaConsumer(configuration: .forTests(cluster, group: uniqueName("group")), logger: testLogger("consumer"))
        try consumer.subscribe(topics: [topic])
        let messages = try await recordEvents(consumer) { $0.messages.count >= 3 }.messages
        await consumer.close()

        try #require(messages.count == 3)
        #expect(messages[0].key == "gone".bytes)
        #expect(messages[0].value == nil)
        #expect(messages[1].value == [])
        #expect(messages[1].headers == [RecordHeader(name: "h", value: [])])
        #expect(messages[2].key == nil)
        #expect(messages[2].value == "no key".bytes)
    }

    /// A consumed record is one buffer: its key, value and header values are views of it, in that
    /// order, so that a record costs one allocation for its bytes whatever its number of headers.
    /// A null part stays nil and takes no room; an empty one is an empty view.
    @Test func aConsumedRecordIsOneBufferWithItsPartsAsViews() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("one-buffer")
        try cluster.createTopic(topic, partitions: 1)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        let headers = [
            RecordHeader(name: "apns-topic", value: "com.example.app"), RecordHeader(name: "none", value: nil as [UInt8]?),
            RecordHeader(name: "empty", value: []), RecordHeader(name: "apns-priority", value: "10"),
        ]
        _ = try await producer.send(ProducerRecord(topic: topic, key: "token".bytes, value: #"{"aps":{}}"#.bytes, headers: headers))
        await producer.shutdown()

        let consumer = try KafkaConsumer(configuration: .forTests(cluster, group: uniqueName("group")), logger: testLogger("consumer"))
        try consumer.subscribe(topics: [topic])
        let messages = try await recordEvents(consumer) { $0.messages.count >= 1 }.messages
        await consumer.close()

        let message = try #require(messages.first)
        let key = try #require(message.key)
        let value = try #require(message.value)
        #expect(key.text == "token")
        #expect(value.text == #"{"aps":{}}"#)
        #expect(message.headers == headers)
        // The parts sit one after another in one allocation: each view starts where the last ended.
        func start(_ bytes: RecordBytes) -> UnsafeRawPointer? { bytes.withUnsafeBytes { $0.baseAddress } }
        let keyStart = try #require(start(key))
        let topicValue = try #require(message.headers[0].value)
        let emptyValue = try #require(message.headers[2].value)
        let priorityValue = try #require(message.headers[3].value)
        #expect(start(value) == keyStart + key.count)
        #expect(start(topicValue) == keyStart + key.count + value.count)
        #expect(emptyValue.isEmpty)
        #expect(start(priorityValue) == keyStart + key.count + value.count + topicValue.count)
        // Each view reads from 0, as an array does.
        #expect(priorityValue.startIndex == 0 && priorityValue[0] == UInt8(ascii: "1") && priorityValue[1] == UInt8(ascii: "0"))
    }

    /// The consumer remembers the header names it has seen (up to 32) instead of decoding each
    /// anew: an empty name, a long one, the same names on every record, and more distinct names
    /// than it remembers all come back exactly as sent.
    @Test func headerNamesSeenBeforeEmptyOrBeyondTheRememberedOnesComeBackAsSent() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("header-names")
        try cluster.createTopic(topic, partitions: 1)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        let sent = (0..<3).map { record in
            [RecordHeader(name: "", value: "empty name"), RecordHeader(name: "apns-collapse-id", value: "\(record)")]
                + (0..<20).map { RecordHeader(name: "name-\(record)-\($0)", value: nil) }
                + [RecordHeader(name: "", value: [])]
        }
        for headers in sent {
            _ = try await producer.send(ProducerRecord(topic: topic, key: "device".bytes, value: "v".bytes, headers: headers))
        }
        await producer.shutdown()

        let consumer = try KafkaConsumer(configuration: .forTests(cluster, group: uniqueName("group")), logger: testLogger("consumer"))
        try consumer.subscribe(topics: [topic])
        let messages = try await recordEvents(consumer) { $0.messages.count >= sent.count }.messages
        await consumer.close()

        #expect(messages.map(\.headers) == sent)
    }

    /// A lent record copied as its view reads it (`ConsumedBatch.copy(at:)`, what the worker
    /// keeps of a request that waits behind its device) shows the same parts as the batch's own
    /// message after the batch went back to librdkafka; and the message made from the copy (for a
    /// copy that then goes the owned way) equals the batch's, null and empty parts included.
    @Test func aLentRecordsCopyOutlivesItsBatchAndReadsAsItsMessage() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("copies")
        try cluster.createTopic(topic, partitions: 1)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        let sent = [
            ProducerRecord(
                topic: topic, key: "token".bytes, value: #"{"aps":{"alert":"Hi"}}"#.bytes,
                headers: [
                    RecordHeader(name: "apns-topic", value: "com.example.app"), RecordHeader(name: "none", value: nil as [UInt8]?),
                    RecordHeader(name: "empty", value: []), RecordHeader(name: "x-\(String(repeating: "n", count: 40))", value: "long name"),
                ]),
            ProducerRecord(topic: topic, key: nil, value: nil),
            ProducerRecord(topic: topic, key: [], value: [], headers: [RecordHeader(name: "", value: "no name")]),
        ]
        for record in sent { _ = try await producer.send(record) }
        await producer.shutdown()

        var configuration = ConsumerConfiguration.forTests(cluster, group: uniqueName("group"))
        configuration.lendsMessages = true
        let consumer = try KafkaConsumer(configuration: configuration, logger: testLogger("consumer"))
        try consumer.subscribe(topics: [topic])
        let copies = try await withTimeLimit(.seconds(90), "three lent records") {
            var copies: [(copy: RecordCopy, message: KafkaMessage)] = []
            for await event in consumer.events {
                guard case .lent(let batch) = event else { continue }
                copies += (0..<batch.count).map { (batch.copy(at: $0), batch.message(at: $0)) }
                if copies.count >= sent.count { break }
            }
            return copies
        }
        await consumer.close()

        try #require(copies.count == sent.count)
        for (copy, message) in copies {
            // Read through the copy's view, the batch long gone.
            let parts = copy.withView { view in
                (
                    key: view.withUnsafeKeyBytes { $0.map { Array($0) } }, value: view.withUnsafeValueBytes { $0.map { Array($0) } },
                    headers: (0..<view.headerCount).map { index in
                        view.withUnsafeHeaderBytes(index) { name, value in
                            RecordHeader(name: String(decoding: name, as: UTF8.self), value: value.map { Array($0) })
                        }
                    },
                    position: view.position, timestamp: view.timestampMilliseconds
                )
            }
            #expect(parts.key == message.key.map(Array.init))
            #expect(parts.value == message.value.map(Array.init))
            #expect(parts.headers == message.headers)
            #expect(parts.position == message.position)
            #expect(parts.timestamp.map { Date(timeIntervalSince1970: Double($0) / 1_000) } == message.timestamp)
            #expect(copy.topic == topic && copy.partition == message.partition && copy.offset == message.offset)
            let owned = KafkaMessage(copy)
            #expect(owned.key == message.key && owned.value == message.value && owned.headers == message.headers)
            #expect(owned.position == message.position && owned.timestamp == message.timestamp)
        }
        #expect(copies.map(\.message.headers) == sent.map(\.headers))
        #expect(copies[1].message.key == nil && copies[1].message.value == nil)
        #expect(copies[2].message.key == [] && copies[2].message.value == [])
    }

    /// The record with sequence number `sequence` for key number `key`.
    static func record(topic: String, key: Int, sequence: Int) -> ProducerRecord {
        let keyText = "device-\(key)"
        return ProducerRecord(topic: topic, key: keyText.bytes, value: "value-\(keyText):\(sequence)".bytes, headers: headers(sequence: sequence))
    }

    /// The headers of the record with sequence number `sequence` (one with a null value).
    static func headers(sequence: Int) -> [RecordHeader] {
        [RecordHeader(name: "sequence", value: String(sequence)), RecordHeader(name: "apns-push-type", value: "alert"), RecordHeader(name: "empty", value: nil)]
    }
}
