import Dispatcher
import Kafka
import Logging
import Records
import Synchronization
import Testing
import TestSupport

@testable import DispatcherService

/// A worker is stopped gracefully (`beginShutdown()`, as a service group does on SIGTERM), but its
/// task may also be cancelled: by a service group whose graceful shutdown ran out of time, or by
/// code that embeds it. Cancelled, it commits nothing, yet it must still close its consumer, so
/// that it leaves the group and its run ends. (The mock cluster rebalances a group a member left
/// only after the session timeout, as if the member had vanished, so the close is seen on the
/// consumer itself rather than through the group.)
@Suite("a cancelled worker", .serialized)
struct WorkerCancellationTests {
    static let partitions: Int32 = 2

    @Test("commits nothing, but closes its consumer, and its run ends")
    func cancelledWorkerClosesItsConsumer() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: CapturedLogs.silent)
        defer { cluster.shutdown() }
        let logs = CapturedLogs()
        let worker = try Self.worker(on: cluster, logs: logs, level: .info)
        let ended = Atomic<Bool>(false)
        let run = Task {
            try? await worker.run()
            ended.store(true, ordering: .sequentiallyConsistent)
        }
        // A backstop, not a bound: in the fresh-clone CI run of 5b37d69 the join took longer than
        // 60 s beside every other suite; alone the whole test takes 5 to 8 s.
        try await eventually("the worker to hold every partition", limit: .seconds(180)) { Self.holdsEvery(logs) }
        #expect(throws: Never.self, "the running worker's consumer is open") { _ = try worker.consumer.groupMetadata() }
        run.cancel()
        // The run is awaited only once it ended: a run that never ended would hold the test forever.
        try await eventually("the cancelled worker's run to end", limit: .seconds(30)) {
            ended.load(ordering: .sequentiallyConsistent)
        }
        await run.value
        // Left open, the consumer would keep the worker's partitions until its session expired,
        // and its poll thread would wait for a reader that is gone.
        #expect(throws: KafkaError.self, "the cancelled worker's consumer is closed") { _ = try worker.consumer.groupMetadata() }
        #expect(!logs.entries.contains { $0.message.hasPrefix("shutting down") }, "a cancelled worker does not drain or commit")
    }

    /// A rebalance's revocation that is still finishing when the shutdown closes the consumer
    /// (SIGTERM right after another member left, in the fresh-clone CI run of a5576e5) is
    /// cancelled with the rest of the run. Its cancelled drain wait returns at once, which must
    /// not read as "records still in flight at the drain limit": exactly-once, that stopped the
    /// worker with an error after its shutdown had committed everything, and it exited 1.
    @Test("a revocation cancelled by the consumer's close, exactly-once, is no failure: the shutdown exits cleanly")
    func revocationCancelledByTheCloseIsNoFailure() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: CapturedLogs.silent)
        defer { cluster.shutdown() }
        let logs = CapturedLogs()
        let worker = try Self.worker(on: cluster, guarantee: .exactlyOnce, logs: logs, level: .debug)
        let run = Task { try await worker.run() }
        try await eventually("the worker to hold every partition", limit: .seconds(180)) { Self.holdsEvery(logs) }

        // The revocation's completion runs in a task cancelled before it waits, as the run's
        // `cancelAll()` cancels it once the consumer's events end.
        let held = (0..<Self.partitions).map { TopicPartition(topic: Pipeline.requests, partition: $0) }
        let revocation = worker.beginRevocation(of: held)
        let completion = Task {
            while !Task.isCancelled { await Task.yield() }
            await worker.completeRevocation(revocation)
        }
        completion.cancel()
        await completion.value
        #expect(worker.failure.error == nil, "\(worker.failure.error.map { "\($0)" } ?? "")")
        #expect(logs.entries.contains { $0.message == "revocation ended by the consumer's close" })

        worker.beginShutdown()
        await #expect(throws: Never.self, "the shutdown ends the run without an error") { try await run.value }
    }

    /// A worker under `guarantee` on `cluster`, whose product topics it creates, logging to `logs` at `level`.
    static func worker(
        on cluster: EmbeddedKafkaCluster, guarantee: DeliveryGuarantee = .atLeastOnce, logs: CapturedLogs, level: Logger.Level
    ) throws -> DispatchWorker {
        try cluster.createTopics(TopicSettings.product.specifications(partitions: partitions))
        var configuration = try MisplacedRecordsTests.configuration(cluster)
        configuration.dispatch.guarantee = guarantee
        return try DispatchWorker(
            settings: WorkerSettings(configuration: configuration),
            dispatcher: try Dispatcher(configuration: configuration, registry: ExtensionRegistry()), logger: logs.logger(level: level))
    }

    /// Whether the worker's last assignment holds every partition of the requests topic.
    static func holdsEvery(_ logs: CapturedLogs) -> Bool {
        guard let last = logs.entries.last(where: { $0.message == "partitions assigned" }) else { return false }
        let held = last.metadata[LogKey.partitions] ?? ""
        return (0..<partitions).allSatisfy { held.contains("\(Pipeline.requests)[\($0)]") }
    }
}
