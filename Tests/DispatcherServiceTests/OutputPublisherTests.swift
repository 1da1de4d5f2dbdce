import Dispatcher
import Foundation
import Kafka
import Logging
import Notifications
import Synchronization
import TestSupport
import Testing

@testable import DispatcherService
import Records

/// How the worker's publisher meets each kind of produce failure, against the embedded broker's
/// fault injection: nothing retried forever, nothing skipped, every request ends once.
@Suite("Output publisher under produce failures", .serialized)
struct OutputPublisherTests {
    static let produceAPIKey: Int16 = 0
    static let messageTooLarge: Int32 = 10
    static let notEnoughReplicas: Int32 = 19
    static let topicAuthorizationFailed: Int32 = 29

    /// An embedded cluster with the output topics, a publisher writing to them, and a reader.
    final class Setup: Sendable {
        let cluster: EmbeddedKafkaCluster
        let producer: KafkaProducer
        let dispatcher: Dispatcher
        let outputs: OutputCollector
        let unwritable = Mutex<[String]>([])

        init() throws {
            var logger = Logger(label: "publisher-test")
            logger.logLevel = .critical
            cluster = try EmbeddedKafkaCluster(brokers: 1, logger: logger)
            for topic in [Pipeline.deliveries, Pipeline.launches, Pipeline.deadLetter] {
                try cluster.createTopic(topic, partitions: 1)
            }
            producer = try KafkaProducer(
                configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: logger)
            var configuration = Configuration()
            configuration.dispatch.deadline = .seconds(1)
            dispatcher = try Dispatcher(configuration: configuration, registry: ExtensionRegistry())
            outputs = try OutputCollector(
                bootstrapServers: cluster.bootstrapServers,
                topics: [Pipeline.deliveries, Pipeline.launches, Pipeline.deadLetter], logger: logger)
        }

        func publisher(retryLimit: Duration = .seconds(30)) -> OutputPublisher {
            var logger = Logger(label: "publisher")
            logger.logLevel = .critical
            return OutputPublisher(
                producer: producer, dispatcher: dispatcher, retryLimit: retryLimit, logger: logger, metrics: nil,
                onUnwritable: { [self] reason in unwritable.withLock { $0.append(reason) } })
        }

        /// A valid alert for a not-running app: a delivery and a launch.
        func request(offset: Int64) async -> (KafkaMessage, DispatchResult) {
            let message = KafkaMessage(
                topic: Pipeline.requests, partition: 0, offset: offset, key: Array(String(repeating: "ab", count: 32).utf8),
                value: Array(#"{"aps":{"alert":"Hello"}}"#.utf8),
                headers: [RecordHeader(name: "apns-topic", value: "com.example.app")], timestamp: nil)
            let result = await dispatcher.dispatch(RequestRecord(message), appStates: NoAppStates(), receivedAt: Date())
            return (message, result)
        }

        func close() async {
            await outputs.close()
            await producer.shutdown()
            cluster.shutdown()
        }
    }

    @Test("a delivery the broker refuses for good becomes the request's one OutputRejected dead letter")
    func permanentFailureBecomesDeadLetter() async throws {
        try await withCleanUp(of: try Setup(), { await $0.close() }) { setup in
            let (message, result) = await setup.request(offset: 7)
            #expect(result.outputs.map(\.kind) == [.delivery, .launch])
            for code in [Self.messageTooLarge, Self.topicAuthorizationFailed] {
                try setup.cluster.pushRequestErrors(apiKey: Self.produceAPIKey, [code])
                let written = await setup.publisher().publish([result], of: [message])
                let ended = try #require(written.first ?? nil)
                #expect(ended.rejectionReason == .outputRejected)
                #expect(ended.deadLetter?.rejection.status == (code == Self.messageTooLarge ? 413 : 500))
                #expect(ended.deadLetter?.rejection.detail.contains("delivery record") == true)
            }
            try await setup.outputs.waitFor(2, in: [Pipeline.deadLetter])
            let deadLetters = setup.outputs.records(of: Pipeline.deadLetter)
            #expect(deadLetters.allSatisfy { $0.header("dlq-reason") == "OutputRejected" && $0.header("dlq-source-offset") == "7" })
            #expect(deadLetters.count == 2)
            #expect(setup.outputs.records(of: Pipeline.deliveries).isEmpty)
            #expect(setup.outputs.records(of: Pipeline.launches).isEmpty, "no launch without its delivery")
            #expect(setup.unwritable.withLock { $0.isEmpty })
        }
    }

    @Test("retriable failures are retried: the delivery, then its launch, each written once")
    func retriableFailureIsRetried() async throws {
        try await withCleanUp(of: try Setup(), { await $0.close() }) { setup in
            let (message, result) = await setup.request(offset: 3)
            // More failures than librdkafka's own retries absorb within a short delivery timeout is
            // not needed: its retries and ours both end in the same records, written once each.
            try setup.cluster.pushRequestErrors(apiKey: Self.produceAPIKey, Array(repeating: Self.notEnoughReplicas, count: 3))
            let written = await setup.publisher().publish([result], of: [message])
            #expect(written.first??.outputs.map(\.kind) == [.delivery, .launch])
            try await setup.outputs.waitFor(1, in: [Pipeline.launches])
            #expect(setup.outputs.records(of: Pipeline.deliveries).count == 1)
            #expect(setup.outputs.records(of: Pipeline.launches).count == 1)
            // The launch was produced only after the delivery was acknowledged: a later offset is not
            // comparable across topics, so the publisher's own order is what holds it; the delivery's
            // timestamp is not after the launch's.
            let delivery = try #require(setup.outputs.records(of: Pipeline.deliveries).first)
            let launch = try #require(setup.outputs.records(of: Pipeline.launches).first)
            if let deliveredAt = delivery.timestamp, let launchedAt = launch.timestamp {
                #expect(deliveredAt <= launchedAt)
            }
        }
    }

    @Test("a retriable failure past the retry limit turns the request into a dead letter, within bounds")
    func retriesAreBounded() async throws {
        try await withCleanUp(of: try Setup(), { await $0.close() }) { setup in
            var configuration = ProducerConfiguration(bootstrapServers: setup.cluster.bootstrapServers)
            // librdkafka's own retries end after a second; ours after two. It reconnects quickly once
            // the broker is back, so the dead letter is written within its own limit.
            configuration.deliveryTimeout = .seconds(1)
            configuration.properties = ["reconnect.backoff.max.ms": "200"]
            let producer = try KafkaProducer(configuration: configuration, logger: Logger(label: "short"))
            try await withCleanUp(of: producer, { await $0.shutdown() }) { producer in
                let publisher = OutputPublisher(
                    producer: producer, dispatcher: setup.dispatcher, retryLimit: .seconds(2), logger: Logger(label: "p"), metrics: nil,
                    onUnwritable: { _ in })
                let (message, result) = await setup.request(offset: 11)
                // The partition's only broker down: every attempt times out.
                try setup.cluster.setBrokerDown(1)
                let started = ContinuousClock.now
                let written = await withTaskGroup(of: [DispatchResult?].self) { group in
                    group.addTask { await publisher.publish([result], of: [message]) }
                    // Back well after the limit has passed (the first failure comes after a second, the
                    // attempt that ends past the limit after about three), so the dead letter can be written.
                    try? await Task.sleep(for: .seconds(5))
                    try? setup.cluster.setBrokerUp(1)
                    return await group.next() ?? []
                }
                let elapsed = ContinuousClock.now - started
                let ended = try #require(written.first ?? nil)
                #expect(ended.rejectionReason == .outputRejected)
                #expect(ended.deadLetter?.rejection.detail.contains("after retrying") == true)
                #expect(elapsed >= .seconds(2), "gave up after \(elapsed), before the limit")
                #expect(elapsed < .seconds(20), "gave up only after \(elapsed)")
                try await setup.outputs.waitFor(1, in: [Pipeline.deadLetter])
            }
        }
    }

    @Test("a dead letter refused for its size is cut to its minimal form; refused for good otherwise, the worker is told")
    func deadLetterFailures() async throws {
        try await withCleanUp(of: try Setup(), { await $0.close() }) { setup in
            let message = KafkaMessage(
                topic: Pipeline.requests, partition: 0, offset: 5, key: Array("not-hex".utf8), value: Array(repeating: 65, count: 2_000),
                headers: [RecordHeader(name: "apns-topic", value: "com.example.app")], timestamp: nil)
            let result = await setup.dispatcher.dispatch(RequestRecord(message), appStates: NoAppStates(), receivedAt: Date())
            #expect(result.rejectionReason == .badDeviceToken)

            try setup.cluster.pushRequestErrors(apiKey: Self.produceAPIKey, [Self.messageTooLarge])
            let written = await setup.publisher().publish([result], of: [message])
            let minimal = try #require(written.first ?? nil)
            #expect(minimal.outputs.first?.value?.isEmpty == true)
            try await setup.outputs.waitFor(1, in: [Pipeline.deadLetter])
            let record = try #require(setup.outputs.records(of: Pipeline.deadLetter).first)
            #expect(record.header("dlq-reason") == "BadDeviceToken")
            #expect(record.header(DeadLetter.truncatedBytesHeader).flatMap { Int($0) } ?? 0 >= 2_000)

            try setup.cluster.pushRequestErrors(apiKey: Self.produceAPIKey, [Self.topicAuthorizationFailed])
            let refused = await setup.publisher().publish([result], of: [message])
            #expect(refused.first ?? nil == nil, "a dead letter that cannot be written leaves its request unfinished")
            #expect(setup.unwritable.withLock { $0.count } == 1)
            #expect(setup.unwritable.withLock { $0.first?.contains("TOPIC_AUTHORIZATION_FAILED") } == true)
        }
    }
}
