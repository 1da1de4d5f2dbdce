import Foundation
import Kafka
import Logging

/// A bounded wait ran out: the condition being awaited never became true.
struct TimedOut: Error, CustomStringConvertible {
    /// What was awaited.
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Runs `operation`, failing with ``TimedOut`` if it has not finished after `limit` (a backstop, not a synchronisation).
func withTimeLimit<T: Sendable>(
    _ limit: Duration, _ what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw TimedOut(what: what)
        }
        defer { group.cancelAll() }
        guard let result = try await group.next() else { throw TimedOut(what: what) }
        return result
    }
}

/// Polls `condition` every 20 ms until it holds, failing after `limit`.
func waitUntil(_ what: String, limit: Duration = .seconds(60), _ condition: @escaping @Sendable () async throws -> Bool) async throws {
    try await withTimeLimit(limit, what) {
        while try await !condition() {
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

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
    /// The string's UTF-8 bytes.
    var bytes: [UInt8] { Array(utf8) }
}

extension Array where Element == UInt8 {
    /// The bytes as UTF-8 text.
    var text: String { String(decoding: self, as: UTF8.self) }
}

/// Collects the messages of a consumer's events, tracking its assignment, until `done` says so.
struct ConsumerRecorder {
    /// Every message seen.
    var messages: [KafkaMessage] = []
    /// Partitions currently owned.
    var assigned: Set<TopicPartition> = []
    /// Every event seen, for diagnostics.
    var eventCount = 0

    /// Applies one event; revocations are released at once.
    mutating func apply(_ event: ConsumerEvent, consumer: KafkaConsumer) {
        eventCount += 1
        switch event {
        case .messages(let batch): messages += batch
        case .assigned(let partitions): assigned.formUnion(partitions)
        case .revoked(let partitions):
            assigned.subtract(partitions)
            consumer.releaseRevoked(partitions)
        case .lost(let partitions): assigned.subtract(partitions)
        case .statistics, .error: break
        }
    }
}

/// Reads `consumer`'s events until `done` holds for the recorder (with a time limit backstop).
func recordEvents(
    _ consumer: KafkaConsumer, limit: Duration = .seconds(90), until done: @escaping @Sendable (ConsumerRecorder) -> Bool
) async throws -> ConsumerRecorder {
    try await withTimeLimit(limit, "consumer events") {
        var recorder = ConsumerRecorder()
        for await event in consumer.events {
            recorder.apply(event, consumer: consumer)
            if done(recorder) { return recorder }
        }
        return recorder
    }
}
