import Kafka
import Synchronization
import Testing
import TestSupport

/// What a producer tells its owner when records cannot be written: the classification of each
/// failure, the fatal-error callback, the topic check at start.
@Suite struct ProducerFailureTests {
    @Test func refusedRecordsAreClassifiedPermanentAndRetriableOnesRetriable() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("classified")
        try cluster.createTopic(topic, partitions: 1)
        var configuration = ProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        configuration.maxMessageBytes = 20_000
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger("producer"))
        _ = try await producer.send(ProducerRecord(topic: topic, key: nil, value: "warm-up".bytes))

        // Larger than message.max.bytes: librdkafka refuses it before sending.
        let tooLarge = await #expect(throws: KafkaError.self) {
            try await producer.send(ProducerRecord(topic: topic, key: nil, value: [UInt8](repeating: 65, count: 30_000)))
        }
        #expect(tooLarge?.produceFailure == .permanent)
        #expect(tooLarge?.isRecordTooLarge == true)

        // The broker refuses it for its size, or for authorisation.
        for code in [Self.messageTooLarge, Self.topicAuthorizationFailed] {
            try cluster.pushRequestErrors(apiKey: Self.produceAPIKey, [code])
            let refused = await #expect(throws: KafkaError.self) {
                try await producer.send(ProducerRecord(topic: topic, key: nil, value: "refused-payload".bytes))
            }
            #expect(refused?.code == code)
            // The error says what the broker said, never the record's value (librdkafka's
            // message errstr of a delivery report is the payload, and no C string).
            #expect(refused.map { !$0.message.contains("refused-payload") && !$0.message.isEmpty } == true)
            #expect(refused?.produceFailure == .permanent)
        }
        #expect(KafkaError(code: 19, name: "NOT_ENOUGH_REPLICAS", message: "", isRetriable: true).produceFailure == .retriable)
        #expect(KafkaError(code: -150, name: "_FATAL", message: "", isFatal: true).produceFailure == .fatal)
        await producer.shutdown()
    }

    @Test func aFatalErrorIsReportedOnceWithItsCause() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("fatal")
        try cluster.createTopic(topic, partitions: 1)
        let reported = Mutex<[KafkaError]>([])
        let producer = try KafkaProducer(
            configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer")
        ) { error in reported.withLock { $0.append(error) } }
        _ = try await producer.send(ProducerRecord(topic: topic, key: nil, value: "before".bytes))
        #expect(producer.fatalError == nil)

        producer.raiseFatalErrorForTesting(reason: "test: sequence state lost")
        producer.raiseFatalErrorForTesting(reason: "test: a second one")
        try await eventually("the fatal error is reported") { !reported.withLock { $0.isEmpty } }
        let error = try #require(producer.fatalError)
        #expect(error.isFatal)
        #expect(error.produceFailure == .fatal)
        #expect(error.message.contains("sequence state lost"))
        // Every produce fails from now on, as fatal.
        let after = await #expect(throws: KafkaError.self) {
            try await producer.send(ProducerRecord(topic: topic, key: nil, value: "after".bytes))
        }
        #expect(after?.produceFailure == .fatal)
        #expect(reported.withLock { $0.count } == 1)
        await producer.shutdown()
    }

    @Test func theTopicCheckPassesForExistingTopicsAndNamesAnUnknownOne() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let known = uniqueName("known")
        try cluster.createTopic(known, partitions: 2)
        var configuration = ProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        configuration.createsTopics = false
        let producer = try KafkaProducer(configuration: configuration, logger: testLogger("producer"))
        try await producer.checkTopics([known], timeout: .seconds(5))
        let unknown = uniqueName("unknown")
        let error = await #expect(throws: KafkaError.self) {
            try await producer.checkTopics([known, unknown], timeout: .seconds(5))
        }
        #expect(error?.produceFailure == .permanent)
        #expect(error?.message.contains(unknown) == true)
        await producer.shutdown()
    }

    /// Kafka's Produce API key.
    static let produceAPIKey: Int16 = 0
    /// `MESSAGE_TOO_LARGE`.
    static let messageTooLarge: Int32 = 10
    /// `TOPIC_AUTHORIZATION_FAILED`.
    static let topicAuthorizationFailed: Int32 = 29
}
