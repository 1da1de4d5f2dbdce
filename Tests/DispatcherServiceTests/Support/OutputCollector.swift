import Foundation
import JSON
import Kafka
import Logging
import Notifications
import Records
import Synchronization
import TestSupport

/// Reads every output topic of a pipeline from its beginning, outside any group, and keeps what
/// it read so a test can wait for counts and inspect records.
final class OutputCollector: Sendable {
    private let records = Mutex<[String: [KafkaMessage]]>([:])
    private let readers: [KafkaTopicReader]
    private let tasks = Mutex<[Task<Void, Never>]>([])

    /// - Parameter isolation: `read_committed` (what the product's readers see) unless a test
    ///   must see what is written before it is committed (a fault test on Tansu, waiting until
    ///   every record is written while a frozen worker's transaction holds the last stable offset).
    init(bootstrapServers: String, topics: [String], logger: Logger, isolation: IsolationLevel = .readCommitted) throws {
        var configuration = ConsumerConfiguration(bootstrapServers: bootstrapServers, groupID: "collector")
        configuration.isolationLevel = isolation
        configuration.properties = ["fetch.wait.max.ms": "10"]
        readers = try topics.map { try KafkaTopicReader(configuration: configuration, topic: $0, logger: logger) }
        for reader in readers {
            // Background readers for the test's lifetime; cancelled and closed by `close()`.
            let task = Task { [self] in
                for await event in reader.events {
                    if case .messages(let batch) = event, let topic = batch.first?.topic {
                        self.records.withLock { $0[topic, default: []].append(contentsOf: batch) }
                    }
                }
            }
            tasks.withLock { $0.append(task) }
        }
    }

    /// The records read from `topic` so far, in the order read (per partition: offset order).
    func records(of topic: String) -> [KafkaMessage] {
        records.withLock { $0[topic] ?? [] }
    }

    /// How many records were read from the topics so far.
    func count(_ topics: [String]) -> Int {
        records.withLock { all in topics.reduce(0) { $0 + (all[$1]?.count ?? 0) } }
    }

    /// Waits until the topics hold at least `expected` records in all.
    func waitFor(_ expected: Int, in topics: [String], limit: Duration = .seconds(180)) async throws {
        try await eventually("\(expected) records in \(topics)", limit: limit) { self.count(topics) >= expected }
    }

    /// The distinct `apns-id` headers among the records of the topics so far.
    func distinctIDs(_ topics: [String]) -> Set<String> {
        records.withLock { all in
            var ids = Set<String>()
            for topic in topics {
                for record in all[topic] ?? [] {
                    if let id = record.header("apns-id") { ids.insert(id) }
                }
            }
            return ids
        }
    }

    /// Waits until every one of `ids` has at least one record in the topics.
    func waitForAll(_ ids: Set<String>, in topics: [String], limit: Duration = .seconds(240)) async throws {
        try await eventually("all \(ids.count) requests accounted for", limit: limit) {
            self.count(topics) >= ids.count && ids.isSubset(of: self.distinctIDs(topics))
        }
    }

    /// Stops reading.
    func close() async {
        for task in tasks.withLock({ $0 }) { task.cancel() }
        for reader in readers { await reader.close() }
    }
}

extension KafkaMessage {
    /// The value of the first header named `name`, as text.
    func header(_ name: String) -> String? {
        headers.first { $0.name == name }.flatMap { $0.value.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// The value as a JSON object (deliveries and launches).
    var json: JSONObject? {
        value.flatMap { try? JSONValue(parsing: $0) }?.objectValue
    }
}
