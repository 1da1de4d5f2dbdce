import Kafka
import Testing

/// Sending many records with one suspension.
@Suite struct BatchSendTests {
    @Test func aBatchKeepsOrderReportsEveryRecordAndFailsOnlyTheBadOne() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("batch")
        try cluster.createTopic(topic, partitions: 3)
        var configuration = ProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        configuration.properties = ["queue.buffering.max.messages": "50"]  // the batch must wait for room
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger("producer"))
        var records = (0..<500).map { ProducerRecord(topic: topic, key: "key-\($0 % 7)".bytes, value: "\($0)".bytes) }
        records[250] = ProducerRecord(topic: topic, partition: 99, key: nil, value: "nowhere".bytes)

        let results = await producer.send(records)
        #expect(results.count == 500)
        for (index, result) in results.enumerated() where index != 250 {
            let report = try result.get()
            #expect(report.topic == topic)
        }
        #expect(throws: KafkaError.self) { try results[250].get() }
        #expect(await producer.send([]).isEmpty)
        await producer.shutdown()

        let consumer = try KafkaConsumer(configuration: .forTests(cluster, group: uniqueName("group")), logger: testLogger("consumer"))
        try consumer.subscribe(topics: [topic])
        let messages = try await recordEvents(consumer) { $0.messages.count >= 499 }.messages
        await consumer.close()
        #expect(messages.count == 499)
        var perKey: [String: [Int]] = [:]
        for message in messages {
            perKey[message.key?.text ?? "", default: []].append(Int(message.value?.text ?? "") ?? -1)
        }
        for (key, values) in perKey {
            #expect(values == values.sorted(), "key \(key) out of order")
        }
    }

    /// Delivery reports name their record by an integer id (batch number and index): batches
    /// sent at once interleave their reports, and each report must reach its own record.
    @Test func concurrentBatchesEachGetTheirOwnReports() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("batches")
        try cluster.createTopic(topic, partitions: 3)
        let producer = try KafkaProducer(
            configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        // Each record's partition is fixed, so its report's partition tells whose report it is.
        let reports = try await withThrowingTaskGroup(of: [(partition: Int32, report: DeliveryReport)].self) { group in
            for batch in 0..<20 {
                group.addTask {
                    let records = (0..<50).map { index in
                        ProducerRecord(topic: topic, partition: Int32((batch + index) % 3), key: nil, value: "\(batch)/\(index)".bytes)
                    }
                    let results = await producer.send(records)
                    return try zip(records, results).map { record, result in (record.partition ?? -1, try result.get()) }
                }
            }
            var all: [(partition: Int32, report: DeliveryReport)] = []
            for try await batch in group { all += batch }
            return all
        }
        await producer.shutdown()
        #expect(reports.count == 1_000)
        #expect(reports.allSatisfy { $0.partition == $0.report.partition }, "each report is its own record's")
        let places = Set(reports.map { "\($0.report.partition)/\($0.report.offset)" })
        #expect(places.count == 1_000, "no two records share a place")
    }
}
