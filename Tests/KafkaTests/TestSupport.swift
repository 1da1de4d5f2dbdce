import Foundation
import Kafka
import Logging
import Records
import TestSupport
import Testing


/// A logger for tests: warnings and worse only.
func testLogger(_ label: String) -> Logger {
    var logger = Logger(label: label)
    logger.logLevel = .warning
    return logger
}

/// A unique name for a test's own topic or group.
func uniqueName(_ prefix: String) -> String {
    "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
}

extension ConsumerConfiguration {
    /// A configuration tuned for the embedded broker's rebalance and fetch timing.
    static func forTests(_ cluster: EmbeddedKafkaCluster, group: String) -> ConsumerConfiguration {
        var configuration = ConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupID: group)
        configuration.sessionTimeout = .seconds(6)
        configuration.heartbeatInterval = .milliseconds(500)
        configuration.properties = ["fetch.wait.max.ms": "10"]
        return configuration
    }
}

extension String {
    /// The string's UTF-8 bytes, as the view a consumed record's key, value and header values are.
    var bytes: RecordBytes { RecordBytes(self) }
}

extension RecordBytes {
    /// The bytes as UTF-8 text.
    var text: String { String(decoding: self, as: UTF8.self) }
}

/// What a consumer's events said: messages and the partitions it owns.
struct ConsumerRecorder: Sendable {
    /// Every message seen.
    var messages: [KafkaMessage] = []
    /// Partitions currently owned (revoked ones stay until released).
    var assigned: Set<TopicPartition> = []
    /// Partitions revoked and not yet released.
    var revoked: Set<TopicPartition> = []
    /// Every statistics event seen.
    var statistics: [ConsumerStatistics] = []
    /// Every error event seen.
    var errors: [KafkaError] = []
    /// Every partition revoked or lost, each time it was.
    var taken: [TopicPartition] = []
    /// The partitions of each rewind reported, in order, and how many messages had been seen then.
    var rewound: [(partitions: [TopicPartition], after: Int)] = []

    /// Applies one event; revocations are released at once through `release` when given.
    mutating func apply(_ event: ConsumerEvent, release: KafkaConsumer?) {
        switch event {
        case .messages(let batch): messages += batch
        case .lent(let batch): messages += (0..<batch.count).map { batch.message(at: $0) }
        case .assigned(let partitions): assigned.formUnion(partitions)
        case .revoked(let partitions):
            taken += partitions
            if let release {
                assigned.subtract(partitions)
                release.releaseRevoked(partitions)
            } else {
                revoked.formUnion(partitions)
            }
        case .lost(let partitions):
            taken += partitions
            assigned.subtract(partitions)
        case .statistics(let statistics): self.statistics.append(statistics)
        case .error(let error): errors.append(error)
        case .caughtUp: Issue.record("a group consumer reported caughtUp, a topic reader's event")
        case .rewound(let partitions): rewound.append((partitions, messages.count))
        }
    }

    /// Records that the test released revoked partitions.
    mutating func released(_ partitions: [TopicPartition]) {
        revoked.subtract(partitions)
        assigned.subtract(partitions)
    }

    /// The messages of one partition, in the order received.
    func messages(of partition: TopicPartition) -> [KafkaMessage] {
        messages.filter { $0.topic == partition.topic && $0.partition == partition.partition }
    }
}

/// Reads `consumer`'s events until `done` holds for the recorder (with a time limit backstop).
func recordEvents(
    _ consumer: KafkaConsumer, limit: Duration = .seconds(90), until done: @escaping @Sendable (ConsumerRecorder) -> Bool
) async throws -> ConsumerRecorder {
    try await withTimeLimit(limit, "consumer events") {
        var recorder = ConsumerRecorder()
        for await event in consumer.events {
            recorder.apply(event, release: consumer)
            if done(recorder) { return recorder }
        }
        return recorder
    }
}
