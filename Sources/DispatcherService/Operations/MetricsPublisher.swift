import Foundation
package import Kafka
package import Logging
import ServiceLifecycle

/// Every interval, produces one ``MetricsSnapshot`` of the worker to the metrics topic, keyed by
/// the worker's id, with a producer of its own (never the output producer: a metrics backlog must
/// not delay outputs). A last snapshot goes out at graceful shutdown.
package final class MetricsPublisher: Service, Sendable {
    private let metrics: WorkerMetrics
    private let statistics: @Sendable () -> WorkerStatistics
    private let producer: KafkaProducer
    private let topic: String
    private let workerId: String
    private let group: String
    private let interval: Duration
    private let logger: Logger

    /// Creates the publisher and its producer.
    ///
    /// - Parameter statistics: reads the worker's counters now.
    /// - Throws: ``KafkaError`` when the producer cannot be created.
    package init(
        metrics: WorkerMetrics,
        statistics: @escaping @Sendable () -> WorkerStatistics,
        producer configuration: ProducerConfiguration,
        topic: String,
        workerId: String,
        group: String,
        interval: Duration,
        logger: Logger
    ) throws {
        self.metrics = metrics
        self.statistics = statistics
        self.producer = try KafkaProducer(configuration: configuration, logger: logger)
        self.topic = topic
        self.workerId = workerId
        self.group = group
        self.interval = interval
        self.logger = logger
    }

    /// A stable worker id: `configured`, or the host name and process id.
    package static func workerId(configured: String?) -> String {
        if let configured, !configured.isEmpty { return configured }
        return "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
    }

    /// Publishes until graceful shutdown, then publishes once more and shuts its producer down.
    package func run() async throws {
        logger.info("publishing metrics snapshots", metadata: [LogKey.topic: "\(topic)", LogKey.worker: "\(workerId)"])
        // The first snapshot starts the interval that rates and percentiles cover.
        _ = takeSnapshot()
        while true {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
            if Task.isShuttingDownGracefully || Task.isCancelled { break }
            await publish()
        }
        // The last snapshot, given at most `lastSnapshotWait` (then the producer's shutdown fails
        // it as purged, which ends its send): a cluster out of reach would otherwise hold the
        // process's exit back by a whole delivery timeout, after the worker has stopped.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.publish() }
            group.addTask { try? await Task.sleep(for: Self.lastSnapshotWait) }
            await group.next()
            group.cancelAll()
            await producer.shutdown(flushTimeout: .zero)
        }
    }

    /// How long the last snapshot, at shutdown, may wait for its delivery.
    static let lastSnapshotWait: Duration = .seconds(5)

    /// Takes a snapshot of the worker now.
    private func takeSnapshot() -> MetricsSnapshot {
        let statistics = self.statistics()
        metrics.update(from: statistics)
        return metrics.snapshot(statistics: statistics, workerId: workerId, group: group)
    }

    private func publish() async {
        let snapshot = takeSnapshot()
        do {
            let record = ProducerRecord(topic: topic, key: Array(workerId.utf8), value: try snapshot.jsonBytes())
            _ = try await producer.send(record)
        } catch {
            logger.warning("cannot publish a metrics snapshot", metadata: [LogKey.topic: "\(topic)", LogKey.error: "\(error)"])
        }
    }
}
