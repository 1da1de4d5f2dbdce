import Kafka
import Records
import Testing

/// Consumer statistics: parsing librdkafka's JSON and receiving it live.
@Suite struct StatisticsTests {
    @Test func parsesLagOfAssignedPartitionsOnly() {
        let json = """
            {"name":"c#consumer-1","topics":{"requests":{"topic":"requests","partitions":{
              "0":{"partition":0,"desired":true,"consumer_lag":12,"app_offset":20,"committed_offset":8,"hi_offset":25,"ls_offset":20},
              "1":{"partition":1,"desired":true,"consumer_lag":-1,"app_offset":-1001,"committed_offset":3,"hi_offset":9,"ls_offset":-1},
              "2":{"partition":2,"desired":true,"consumer_lag":-1,"app_offset":-1001,"committed_offset":-1001,"hi_offset":0,"ls_offset":0},
              "3":{"partition":3,"desired":false,"consumer_lag":40,"app_offset":1,"committed_offset":1,"hi_offset":41,"ls_offset":41},
              "-1":{"partition":-1,"desired":false,"consumer_lag":-1}}}}}
            """
        let statistics = ConsumerStatistics(json: json)
        let zero = TopicPartition(topic: "requests", partition: 0)
        let one = TopicPartition(topic: "requests", partition: 1)
        #expect(statistics.consumerLag == [zero: 0, one: 6])
        #expect(statistics.committedLag == [zero: 12])
        #expect(statistics.raw == json)
    }

    @Test func malformedStatisticsGiveNoLagInsteadOfFailing() {
        #expect(ConsumerStatistics(json: "{not json").consumerLag.isEmpty)
    }

    @Test func aConsumerReportsLagPerAssignedPartition() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("lag")
        try cluster.createTopic(topic, partitions: 2)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        for index in 0..<10 {
            _ = try await producer.send(ProducerRecord(topic: topic, partition: 0, key: nil, value: "\(index)".bytes))
        }
        await producer.shutdown()

        var configuration = ConsumerConfiguration.forTests(cluster, group: uniqueName("group"))
        configuration.statisticsInterval = .milliseconds(100)
        let consumer = ConsumerWatcher(try KafkaConsumer(configuration: configuration, logger: testLogger("consumer")))
        try consumer.consumer.subscribe(topics: [topic])
        let first = TopicPartition(topic: topic, partition: 0)
        try await consumer.waitUntil("all records") { $0.messages.count == 10 }
        // Everything read: partition 0's lag drops to 0; the empty partition 1 has no position, so no lag yet.
        try await consumer.waitUntil("zero lag on partition 0") { $0.statistics.last?.consumerLag[first] == 0 }
        #expect(consumer.snapshot.statistics.last?.consumerLag[TopicPartition(topic: topic, partition: 1)] == nil)
        // Half committed: the committed lag is the other half.
        try await consumer.consumer.commit([TopicPartitionOffset(topic: topic, partition: 0, offset: 5)])
        try await consumer.waitUntil("committed lag on partition 0") { $0.statistics.last?.committedLag[first] == 5 }
        await consumer.consumer.close()
    }
}
