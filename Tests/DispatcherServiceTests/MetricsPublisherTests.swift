import Foundation
import Kafka
import Logging
import ServiceLifecycle
import Testing
import TestSupport

@testable import DispatcherService

/// The metrics publisher's last snapshot, at graceful shutdown: delivered when the cluster
/// answers, and never holding the process's exit back by a delivery timeout when it does not
/// (a worker cut off from the cluster stops, then waits for this).
@Suite("the metrics publisher at shutdown", .serialized)
struct MetricsPublisherTests {
    static let topic = "notifications.metrics"

    @Test("its last snapshot reaches the metrics topic")
    func lastSnapshotIsPublished() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: CapturedLogs.silent)
        defer { cluster.shutdown() }
        try cluster.createTopic(Self.topic, partitions: 1)
        let collector = try OutputCollector(bootstrapServers: cluster.bootstrapServers, topics: [Self.topic], logger: CapturedLogs.silent)
        try await withCleanUp(of: collector, { await $0.close() }) { collector in
            // An interval far past the test: the only snapshot is the last one.
            let publisher = try Self.publisher(bootstrapServers: cluster.bootstrapServers, interval: .seconds(3_600))
            try await Self.runThenShutDown(publisher)
            try await collector.waitFor(1, in: [Self.topic], limit: .seconds(30))
            let snapshot = try #require(collector.records(of: Self.topic).first)
            #expect(snapshot.key.map { String(decoding: $0, as: UTF8.self) } == "worker-1")
        }
    }

    @Test("with the cluster out of reach, its last snapshot waits 5 s, not a delivery timeout (30 s)")
    func lastSnapshotWaitIsBounded() async throws {
        // Nothing listens on port 9 of the loopback: every connection is refused.
        let publisher = try Self.publisher(bootstrapServers: "127.0.0.1:9", interval: .seconds(3_600))
        let took = try await Self.runThenShutDown(publisher)
        #expect(took >= MetricsPublisher.lastSnapshotWait, "the last snapshot was given its time: \(took)")
        #expect(took < MetricsPublisher.lastSnapshotWait + .seconds(10), "the shutdown took \(took)")
    }

    /// A publisher of an idle worker's statistics to the metrics topic on `bootstrapServers`.
    static func publisher(bootstrapServers: String, interval: Duration) throws -> MetricsPublisher {
        let export = PrometheusExport()
        return try MetricsPublisher(
            metrics: WorkerMetrics(names: MetricNames(prefix: "t"), factory: export.factory), statistics: { WorkerStatistics() },
            producer: ProducerConfiguration(bootstrapServers: bootstrapServers), topic: topic, workerId: "worker-1",
            group: "metrics-test", interval: interval, logger: CapturedLogs.silent)
    }

    /// Runs `publisher` in a service group, shuts the group down gracefully once it runs, and
    /// waits for the end.
    /// - Returns: how long the shutdown took.
    @discardableResult
    static func runThenShutDown(_ publisher: MetricsPublisher) async throws -> Duration {
        let group = ServiceGroup(configuration: .init(services: [publisher], logger: CapturedLogs.silent))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            // Shut down at once: a publisher that starts after it publishes its last snapshot all
            // the same.
            let began = ContinuousClock.now
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return ContinuousClock.now - began
        }
    }
}
