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

        func publisher(retryLimit: Duration = .seconds(30), recovery: TransactionRecovery? = nil, producer: KafkaProducer? = nil) -> OutputPublisher {
            var logger = Logger(label: "publisher")
            logger.logLevel = .critical
            return OutputPublisher(
                producer: producer ?? self.producer, dispatcher: dispatcher, retryLimit: retryLimit, logger: logger, metrics: nil,
                onUnwritable: { [self] reason in unwritable.withLock { $0.append(reason) } }, recovery: recovery)
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
                let logs = CapturedLogs()
                let publisher = OutputPublisher(
                    producer: producer, dispatcher: setup.dispatcher, retryLimit: .seconds(2), logger: logs.logger(), metrics: nil,
                    onUnwritable: { _ in })
                let (message, result) = await setup.request(offset: 11)
                // The partition's only broker down: every attempt times out.
                try setup.cluster.setBrokerDown(1)
                let started = ContinuousClock.now
                let gaveUp = Mutex<Duration?>(nil)
                let written = try await withThrowingTaskGroup(of: [DispatchResult?].self) { group in
                    group.addTask { await publisher.publish([result], of: [message]) }
                    // Back once the publisher gave the delivery up (however long its attempts took
                    // on this machine), so that its dead letter can be written: a broker back
                    // earlier would take the delivery itself.
                    try await eventually("the delivery given up", limit: .seconds(60)) {
                        logs.entries.contains { $0.message.contains("its request becomes a dead letter") }
                    }
                    gaveUp.withLock { $0 = ContinuousClock.now - started }
                    try setup.cluster.setBrokerUp(1)
                    return try await group.next() ?? []
                }
                let ended = try #require(written.first ?? nil)
                #expect(ended.rejectionReason == .outputRejected)
                #expect(ended.deadLetter?.rejection.detail.contains("after retrying") == true)
                // Given up with the first attempt that ends past the limit: librdkafka's delivery
                // timeout (1 s) and a backoff after it, whatever the machine's speed.
                let elapsed = try #require(gaveUp.withLock { $0 })
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

    // MARK: Exactly-once

    /// What the worker's rewind does to the recovery, without Kafka: the request is processed again.
    static func rewind(_ recovery: TransactionRecovery) {
        #expect(recovery.beginRewind(), "a rewind was asked for")
        #expect(recovery.judgeRewind() == nil)
        recovery.endRewind()
    }

    @Test("exactly-once: a refused delivery gives its request up and asks for a rewind; processed again it is its dead letter, cut to the minimal form if that is refused for its size too; refused again, the worker is told")
    func refusalsInTransaction() async throws {
        try await withCleanUp(of: try Setup(), { await $0.close() }) { setup in
            let recovery = TransactionRecovery()
            let publisher = setup.publisher(recovery: recovery)
            let (message, result) = await setup.request(offset: 7)

            try setup.cluster.pushRequestErrors(apiKey: Self.produceAPIKey, [Self.messageTooLarge])
            #expect(await publisher.publish([result], of: [message]).map { $0 == nil } == [true], "given up: its transaction cannot commit")
            let refusal = try #require(recovery.refusal(of: message.position))
            #expect(refusal.rejection?.contains("The delivery record could not be written to \(Pipeline.deliveries)") == true)
            #expect(refusal.rejection?.contains("MSG_SIZE_TOO_LARGE") == true)
            #expect(refusal.isTooLarge && !refusal.isMinimal)
            #expect(recovery.isRewindRequested)
            Self.rewind(recovery)

            // Processed again (decided again, as the worker's owned path does): its dead letter.
            let again = await publisher.publish([result], of: [message])
            let ended = try #require(again.first ?? nil)
            #expect(ended.rejectionReason == .outputRejected)
            #expect(ended.deadLetter?.rejection.status == 413)
            try await setup.outputs.waitFor(1, in: [Pipeline.deadLetter])
            let deadLetter = try #require(setup.outputs.records(of: Pipeline.deadLetter).first)
            #expect(deadLetter.header("dlq-reason") == "OutputRejected")
            #expect(deadLetter.header("dlq-source-offset") == "7")
            #expect(deadLetter.header("dlq-detail")?.contains("MSG_SIZE_TOO_LARGE") == true)
            #expect(!recovery.isRewindRequested)

            // Its dead letter refused for its size in a later attempt: remembered, written minimal.
            try setup.cluster.pushRequestErrors(apiKey: Self.produceAPIKey, [Self.messageTooLarge])
            #expect(await publisher.publish([result], of: [message]).map { $0 == nil } == [true])
            #expect(recovery.refusal(of: message.position)?.isMinimal == true)
            Self.rewind(recovery)
            let minimal = try #require(await publisher.publish([result], of: [message]).first ?? nil)
            #expect(minimal.rejectionReason == .outputRejected)
            #expect(minimal.outputs.first?.value?.isEmpty == true)
            try await setup.outputs.waitFor(2, in: [Pipeline.deadLetter])

            // The minimal form refused too: nothing can account for the request.
            try setup.cluster.pushRequestErrors(apiKey: Self.produceAPIKey, [Self.messageTooLarge])
            #expect(await publisher.publish([result], of: [message]).map { $0 == nil } == [true])
            #expect(setup.unwritable.withLock { $0.count } == 1)
            #expect(setup.outputs.records(of: Pipeline.deliveries).isEmpty)
            #expect(setup.outputs.records(of: Pipeline.launches).isEmpty)
        }
    }

    @Test("exactly-once: a refused launch is remembered so that, processed again, the request writes its delivery then its dead letter, as at-least-once does")
    func launchRefusedInTransaction() async throws {
        try await withCleanUp(of: try Setup(), { await $0.close() }) { setup in
            let recovery = TransactionRecovery()
            let publisher = setup.publisher(recovery: recovery)
            let (message, result) = await setup.request(offset: 9)
            // The delivery goes through; the launch, in the next round, is refused.
            try setup.cluster.pushRequestErrors(apiKey: Self.produceAPIKey, [0, Self.topicAuthorizationFailed])
            #expect(await publisher.publish([result], of: [message]).map { $0 == nil } == [true])
            #expect(recovery.refusal(of: message.position)?.isLaunch == true)
            Self.rewind(recovery)
            let ended = try #require(await publisher.publish([result], of: [message]).first ?? nil)
            #expect(ended.outputs.map(\.kind) == [.delivery, .deadLetter])
            #expect(ended.deadLetter?.rejection.detail.contains("launch record") == true)
            try await setup.outputs.waitFor(1, in: [Pipeline.deadLetter])
            #expect(setup.outputs.records(of: Pipeline.launches).isEmpty)
        }
    }

    @Test("exactly-once: a failure with no refusal for good asks for a rewind and remembers nothing; a record librdkafka refuses before sending it is met in the transaction, as at-least-once")
    func otherFailuresInTransaction() async throws {
        try await withCleanUp(of: try Setup(), { await $0.close() }) { setup in
            // Refused before it is sent: larger than the producer's message.max.bytes.
            var configuration = ProducerConfiguration(bootstrapServers: setup.cluster.bootstrapServers)
            configuration.maxMessageBytes = 2_000
            let small = try KafkaProducer(configuration: configuration, logger: Logger(label: "small"))
            try await withCleanUp(of: small, { await $0.shutdown() }) { small in
                let recovery = TransactionRecovery()
                let message = KafkaMessage(
                    topic: Pipeline.requests, partition: 0, offset: 4, key: Array(String(repeating: "ab", count: 32).utf8),
                    value: Array(#"{"aps":{"alert":"\#(String(repeating: "x", count: 3_000))"}}"#.utf8),
                    headers: [RecordHeader(name: "apns-topic", value: "com.example.app")], timestamp: nil)
                let result = await setup.dispatcher.dispatch(RequestRecord(message), appStates: NoAppStates(), receivedAt: Date())
                #expect(result.outputs.first?.kind == .delivery)
                let written = await setup.publisher(recovery: recovery, producer: small).publish([result], of: [message])
                let ended = try #require(written.first ?? nil, "the transaction stays committable: met in it")
                #expect(ended.rejectionReason == .outputRejected)
                #expect(!recovery.isRewindRequested)
                #expect(recovery.refusal(of: message.position) == nil)
                try await setup.outputs.waitFor(1, in: [Pipeline.deadLetter])
            }

            // Timed out (the partition's broker down past the delivery timeout): given up, rewound, nothing remembered.
            var shortTimeout = ProducerConfiguration(bootstrapServers: setup.cluster.bootstrapServers)
            shortTimeout.deliveryTimeout = .seconds(1)
            let producer = try KafkaProducer(configuration: shortTimeout, logger: Logger(label: "short"))
            try await withCleanUp(of: producer, { await $0.shutdown() }) { producer in
                let recovery = TransactionRecovery()
                let (message, result) = await setup.request(offset: 12)
                try setup.cluster.setBrokerDown(1)
                let written = await setup.publisher(recovery: recovery, producer: producer).publish([result], of: [message])
                try setup.cluster.setBrokerUp(1)
                #expect(written.map { $0 == nil } == [true])
                #expect(recovery.isRewindRequested)
                #expect(recovery.refusal(of: message.position) == nil)
                #expect(recovery.beginRewind())
                #expect(recovery.judgeRewind() == nil, "one fruitless rewind is allowed")
                recovery.endRewind()
            }
            #expect(setup.unwritable.withLock { $0.isEmpty })
        }
    }

    @Test("exactly-once: rewinds that remember no refusal stop the worker after a few in a row; a refusal or a commit counts afresh")
    func fruitlessRewindsAreBounded() {
        let recovery = TransactionRecovery()
        let place = TopicPartitionOffset(topic: Pipeline.requests, partition: 0, offset: 1)
        func rewind() -> String? {
            recovery.requestRewind()
            #expect(recovery.beginRewind())
            defer { recovery.endRewind() }
            return recovery.judgeRewind()
        }
        for _ in 1..<TransactionRecovery.fruitlessLimit { #expect(rewind() == nil) }
        // A refusal remembered makes the next rewind fruitful, and a commit counts afresh too.
        recovery.rememberRejection(of: place, detail: "refused", isTooLarge: false, isLaunch: false)
        #expect(rewind() == nil)
        for _ in 1..<TransactionRecovery.fruitlessLimit { #expect(rewind() == nil) }
        recovery.committed([TopicPartitionOffset(topic: Pipeline.requests, partition: 0, offset: 2)], owned: [place.topicPartition])
        #expect(recovery.refusal(of: place) == nil, "committed past: forgotten")
        for _ in 1..<TransactionRecovery.fruitlessLimit { #expect(rewind() == nil) }
        #expect(rewind()?.contains("without a refused record") == true)

        recovery.requestRewind()
        recovery.requestRewind()
        #expect(recovery.beginRewind())
        recovery.requestRewind()
        #expect(!recovery.isRewindRequested, "failures during a rewind are the aborted transaction's")
    }
}
