import Dispatcher
import Foundation
import JSON
import Kafka
import Logging
import Notifications
import TestSupport
import Testing

@testable import DispatcherService
import Records

/// No record stops its partition: the request whose dead letter is larger than the output limit,
/// and the worker whose producer fails for good.
@Suite("No poison pills", .serialized)
struct PoisonPillTests {
    static let token = String(repeating: "7c1f0e2d", count: 8)

    @Test("a 1 MB request with a large header ends as one cut dead letter; the five alerts behind it are delivered and committed")
    func oversizedRequest() async throws {
        try await Pipeline.with(partitions: 1, apps: EndToEndTests.apps(webhookURL: "http://127.0.0.1:9/unused")) { pipeline in
            var configuration = ProducerConfiguration(bootstrapServers: pipeline.bootstrapServers)
            configuration.maxMessageBytes = 1_100_000
            let producer = try KafkaProducer(configuration: configuration, logger: pipeline.logger)
            try await withCleanUp(of: producer, { await $0.shutdown() }) { producer in
                let bigID = UUID().uuidString.lowercased()
                let prefix = #"{"aps":{"alert":"big"},"pad":""#
                let value = Array((prefix + String(repeating: "A", count: 999_700 - prefix.utf8.count - 2) + #""}"#).utf8)
                #expect(value.count == 999_700)
                let big = ProducerRecord(
                    topic: Pipeline.requests, key: Array(Self.token.utf8), value: value,
                    headers: [
                        RecordHeader(name: "apns-topic", value: EndToEndTests.bundleID), RecordHeader(name: "apns-id", value: bigID),
                        RecordHeader(name: "x-provider-trace", value: String(repeating: "t", count: 300)),
                    ])
                _ = try await producer.send(big)
                let alerts = (0..<5).map { TestRequest.make(.plainAlert, bundleID: EndToEndTests.bundleID, token: Self.token, sequence: $0) }
                for alert in alerts { _ = try await producer.send(alert.record.producerRecord(topic: Pipeline.requests)) }

                let started = ContinuousClock.now
                let worker = try pipeline.startWorker("worker")
                try await pipeline.outputs.waitForAll(Set(alerts.map(\.apnsID) + [bigID]), in: Pipeline.accountingTopics, limit: .seconds(60))
                let elapsed = ContinuousClock.now - started
                #expect(elapsed < .seconds(30), "the partition moved on only after \(elapsed)")

                let deadLetters = pipeline.outputs.records(of: Pipeline.deadLetter)
                #expect(deadLetters.count == 1)
                let deadLetter = try #require(deadLetters.first)
                #expect(deadLetter.header("dlq-reason") == "PayloadTooLarge")
                #expect(deadLetter.header("apns-id") == bigID)
                #expect(deadLetter.header("x-provider-trace")?.count == 300, "the request's headers are kept")
                let cut = try #require(deadLetter.header(DeadLetter.truncatedBytesHeader).flatMap { Int($0) })
                #expect(cut > 0)
                #expect((deadLetter.value?.count ?? 0) + cut == value.count, "what was kept and what was cut add up")
                #expect(deadLetter.value.map { value.prefix($0.count).elementsEqual($0) } == true, "the first bytes of the value are kept")
                #expect(Set(Outcomes(pipeline.outputs).countsByID.keys) == Set(alerts.map(\.apnsID) + [bigID]))
                #expect(pipeline.outputs.records(of: Pipeline.deliveries).count == 5)
                try await eventually("every offset of the partition committed", limit: .seconds(30)) {
                    try await pipeline.committedOffsets()[0] == 6
                }
                worker.send(signal: SIGTERM)
                let exit = try await worker.waitForExit()
                #expect(exit.exitedNormally && exit.status == 0, "\(pipeline.log(of: "worker").suffix(1_500))")
            }
        }
    }

    @Test("a fatal producer error fails liveness and readiness and stops the worker at once with the error")
    func fatalProducerError() async throws {
        var logger = Logger(label: "fatal-test")
        logger.logLevel = .critical
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: logger)
        defer { cluster.shutdown() }
        try cluster.createTopics(TopicSettings.product.specifications(partitions: 2))
        var configuration = Configuration()
        configuration.kafka.bootstrapServers = cluster.bootstrapServers
        configuration.kafka.groupId = "fatal-\(UUID().uuidString.prefix(8))"
        configuration.kafka.properties = ["session.timeout.ms": "6000", "heartbeat.interval.ms": "500", "fetch.wait.max.ms": "10"]
        let dispatcher = try Dispatcher(configuration: configuration, registry: ExtensionRegistry())
        let health = WorkerHealth(livenessLimit: .seconds(60))
        let worker = try DispatchWorker(
            settings: WorkerSettings(configuration: configuration), dispatcher: dispatcher, logger: logger, health: health)
        let stopped = ContinuousClock.now
        let thrown = await withTaskGroup(of: (any Error)?.self) { group in
            group.addTask {
                do { try await worker.run() } catch { return error }
                return nil
            }
            do {
                try await eventually("the worker is ready", limit: .seconds(30)) { health.readiness().isHealthy }
                worker.producer.raiseFatalErrorForTesting(reason: "test: the idempotent producer lost its state")
                try await eventually("health reports the failure", limit: .seconds(10)) { !health.liveness().isHealthy }
                #expect(!health.readiness().isHealthy)
                #expect(health.liveness().reason.contains("lost its state"))
            } catch {
                Issue.record(error)
            }
            return await group.next() ?? nil
        }
        // It did not wait for the drain limit (37 s): a failed producer writes nothing more.
        #expect(ContinuousClock.now - stopped < .seconds(30))
        let error = try #require(thrown as? KafkaError, "run() ended with \(String(describing: thrown))")
        #expect(error.isFatal)
    }

    @Test("a state topic with another partition count than the requests topic stops the worker at start, naming it")
    func stateTopicsNotCoPartitioned() async throws {
        var logger = Logger(label: "co-partitioning-test")
        logger.logLevel = .critical
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: logger)
        defer { cluster.shutdown() }
        var topics = TopicSettings.product.specifications(partitions: 2)
        topics = topics.map { $0.name == "notifications.stored" ? TopicSpecification(name: $0.name, partitions: 3, config: $0.config) : $0 }
        try cluster.createTopics(topics)
        var configuration = Configuration()
        configuration.kafka.bootstrapServers = cluster.bootstrapServers
        let dispatcher = try Dispatcher(configuration: configuration, registry: ExtensionRegistry())
        let worker = try DispatchWorker(settings: WorkerSettings(configuration: configuration), dispatcher: dispatcher, logger: logger)
        let error = await #expect(throws: WorkerStopped.self) {
            try await withTimeLimit(.seconds(30), "the worker to stop") { try await worker.run() }
        }
        #expect(
            error?.description.contains("as many partitions as notifications.requests (2)") == true
                && error?.description.contains("notifications.stored has 3") == true,
            "\(String(describing: error))")
    }

    @Test("an output topic the cluster does not know stops the worker at start, naming it")
    func unknownOutputTopic() async throws {
        var logger = Logger(label: "topic-check-test")
        logger.logLevel = .critical
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: logger)
        defer { cluster.shutdown() }
        for topic in [Pipeline.requests, Pipeline.responses, Pipeline.launches, Pipeline.actions, Pipeline.deadLetter, Pipeline.feedback] {
            try cluster.createTopic(topic, partitions: 1)
        }
        var configuration = Configuration()
        configuration.kafka.bootstrapServers = cluster.bootstrapServers
        configuration.topics.deliveries = "notifications.deliverys"
        let dispatcher = try Dispatcher(configuration: configuration, registry: ExtensionRegistry())
        let worker = try DispatchWorker(settings: WorkerSettings(configuration: configuration), dispatcher: dispatcher, logger: logger)
        let error = await #expect(throws: WorkerStopped.self) {
            try await withTimeLimit(.seconds(30), "the worker to stop") { try await worker.run() }
        }
        #expect(error?.description.contains("notifications.deliverys") == true, "\(String(describing: error))")
        // The misspelt topic was reported, not created.
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: logger)
        await #expect(throws: KafkaError.self) {
            try await producer.checkTopics(["notifications.deliverys"], timeout: .seconds(5))
        }
        await producer.shutdown()
    }

    @Test("serve on a cluster without its deliveries topic: one critical line naming it, no error line after it, exit status 1")
    func serveThatCannotStartIsQuiet() async throws {
        var logger = Logger(label: "serve-start-test")
        logger.logLevel = .critical
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: logger)
        defer { cluster.shutdown() }
        try cluster.createTopics(TopicSettings.product.specifications(partitions: 2).filter { $0.name != Pipeline.deliveries })
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("nd-serve-\(UUID().uuidString).yaml")
        try """
            kafka:
              bootstrapServers: "\(cluster.bootstrapServers)"
              groupId: start-\(UUID().uuidString.prefix(8))
            http:
              host: 127.0.0.1
              port: 0
            apps:
              com.example.app: {}
            """.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try await BuiltBinary.run(["serve", "--config", file.path], limit: .seconds(60))
        #expect(run.status == 1)
        // Logs are JSON lines when standard error is not a terminal; the last line is the
        // command's own `Error: ...`, which is not a log line.
        let levels = run.standardError.split(separator: "\n").map { line in
            (try? JSONValue(parsing: Array(line.utf8)))?[path: ["level"]]?.stringValue ?? "not a log line"
        }
        let critical = levels.indices.filter { levels[$0] == "critical" }
        #expect(critical.count == 1, "\(run.standardError)")
        #expect(run.standardError.contains("cannot start the worker") && run.standardError.contains(Pipeline.deliveries))
        let after = levels.dropFirst((critical.first ?? 0) + 1)
        #expect(!after.contains("error") && !after.contains("critical"), "after the critical line: \(run.standardError)")
    }
}
