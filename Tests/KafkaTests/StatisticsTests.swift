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
        // Cut short, and trailing bytes: the reader accepts whole documents only.
        let whole = #"{"topics":{"t":{"partitions":{"0":{"partition":0,"app_offset":1,"hi_offset":3}}}}}"#
        #expect(ConsumerStatistics(json: whole).consumerLag == [TopicPartition(topic: "t", partition: 0): 2])
        #expect(ConsumerStatistics(json: String(whole.dropLast())).consumerLag.isEmpty)
        #expect(ConsumerStatistics(json: whole + "x").consumerLag.isEmpty)
    }

    /// A document shaped like librdkafka's (its members in its order, per broker and per partition):
    /// far more keys per object than a payload may have, nested objects and arrays, escaped strings.
    @Test func readsEveryPartitionOfALargeDocumentAndSkipsTheRest() {
        let partitionCount = 120
        func histogram() -> String {
            #"{"min":0,"max":12,"avg":3,"sum":44,"stddev":1.5,"p50":2,"p75":3,"p90":5,"p95":6,"p99":9,"p99_99":12,"outofrange":0,"hdrsize":15376,"cnt":14}"#
        }
        func partition(_ number: Int) -> String {
            let fields = (0..<30).map { #""field_\#($0)":\#($0 * 7)"# }.joined(separator: ",")
            return #"{"partition":\#(number),"broker":\#(number % 3 + 1),"leader":\#(number % 3 + 1),"desired":\#(number % 10 != 9),"unknown":false,"msgq_cnt":0,"fetch_state":"active","query_offset":-1001,"next_offset":\#(100 + number),"app_offset":\#(100 + number),"stored_offset":-1001,"commited_offset":\#(90 + number),"committed_offset":\#(90 + number),"eof_offset":-1001,"lo_offset":0,"hi_offset":\#(150 + number),"ls_offset":\#(140 + number),"consumer_lag":\#(50 + number),"consumer_lag_stored":-1,"leader_epoch":0,\#(fields)}"#
        }
        let broker = (0..<40).map { #""b\#($0)":\#($0)"# }.joined(separator: ",")
        let partitions = (0..<partitionCount).map { #""\#($0)":\#(partition($0))"# }.joined(separator: ",")
            + #","-1":{"partition":-1,"desired":false,"consumer_lag":-1,"app_offset":-1001,"hi_offset":-1}"#
        let json = """
            {"name":"c#consumer-1 \\"quoted\\" \\u00e9","client_id":"c","type":"consumer","ts":123456789,"time":1700000000,
             "brokers":{"127.0.0.1:9092/1":{"name":"127.0.0.1:9092/1","nodeid":1,"state":"UP",\(broker),
               "int_latency":\(histogram()),"rtt":\(histogram()),"req":{"Fetch":12,"Produce":0},
               "toppars":{"requests-0":{"topic":"requests","partition":0}}}},
             "topics":{"requests":{"topic":"requests","age":1000,"metadata_age":900,"batchsize":\(histogram()),
               "batchcnt":\(histogram()),"partitions":{\(partitions)}},
              "empty":{"topic":"empty","partitions":{}}},
             "cgrp":{"state":"up","join_state":"steady","assignment_size":\(partitionCount)},
             "list":[1,[2,{"x":null}],true,"]"],"tot":1.5e3}
            """
        let statistics = ConsumerStatistics(json: json)
        var lag: [TopicPartition: Int64] = [:]
        var committedLag: [TopicPartition: Int64] = [:]
        for number in 0..<partitionCount where number % 10 != 9 {
            let key = TopicPartition(topic: "requests", partition: Int32(number))
            lag[key] = 40  // the last stable offset (140 + n) minus the application's offset (100 + n)
            committedLag[key] = Int64(50 + number)
        }
        #expect(statistics.consumerLag == lag)
        #expect(statistics.committedLag == committedLag)
    }

    @Test func aConsumerReportsLagPerAssignedPartition() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("lag")
        try cluster.createTopic(topic, partitions: 2)
        let consumer = try await Self.consumerWithStatistics(cluster, topic: topic, recordsTo: Array(repeating: 0, count: 10))
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

    @Test func aConsumerOfManyPartitionsReportsTheLagOfEach() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("lag-many")
        // More partitions than a payload object may have keys: the statistics list one member each.
        let partitions: Int32 = 48
        try cluster.createTopic(topic, partitions: partitions)
        let consumer = try await Self.consumerWithStatistics(cluster, topic: topic, recordsTo: Array(0..<partitions))
        try await consumer.waitUntil("all records") { $0.messages.count == Int(partitions) }
        let everyPartition = Dictionary(uniqueKeysWithValues: (0..<partitions).map { (TopicPartition(topic: topic, partition: $0), Int64(0)) })
        try await consumer.waitUntil("zero lag on every partition") { $0.statistics.last?.consumerLag == everyPartition }
        await consumer.consumer.close()
    }

    /// Produces one record to each partition `partitions` lists (a partition as often as it is
    /// listed), then subscribes a consumer of `topic` that reports statistics every 100 ms.
    private static func consumerWithStatistics(
        _ cluster: EmbeddedKafkaCluster, topic: String, recordsTo partitions: [Int32]
    ) async throws -> ConsumerWatcher {
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        for (index, partition) in partitions.enumerated() {
            _ = try await producer.send(ProducerRecord(topic: topic, partition: partition, key: nil, value: "\(index)".bytes))
        }
        await producer.shutdown()
        var configuration = ConsumerConfiguration.forTests(cluster, group: uniqueName("group"))
        configuration.statisticsInterval = .milliseconds(100)
        let consumer = ConsumerWatcher(try KafkaConsumer(configuration: configuration, logger: testLogger("consumer")))
        try consumer.consumer.subscribe(topics: [topic])
        return consumer
    }
}
