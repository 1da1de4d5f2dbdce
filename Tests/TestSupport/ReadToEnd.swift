public import Kafka
import Logging

/// Every record of `topic` that a reader with `isolation` reads up to the partitions' ends (for
/// `read_committed`: up to the last stable offset), read outside any group; fails after `limit`.
public func readToEnd(
    _ topic: String, on bootstrapServers: String, _ isolation: IsolationLevel, limit: Duration = .seconds(60)
) async throws -> [KafkaMessage] {
    var configuration = ConsumerConfiguration(bootstrapServers: bootstrapServers, groupID: "unused")
    configuration.isolationLevel = isolation
    configuration.properties = ["fetch.wait.max.ms": "10"]
    var logger = Logger(label: "read-to-end")
    logger.logLevel = .warning
    let reader = try KafkaTopicReader(configuration: configuration, topic: topic, logger: logger)
    return try await withCleanUp(of: reader, { await $0.close() }) { reader in
        try await withTimeLimit(limit, "reading \(topic) to its end") {
            var messages: [KafkaMessage] = []
            for await event in reader.events {
                switch event {
                case .messages(let batch): messages += batch
                case .caughtUp: return messages
                case .error, .assigned, .revoked, .lost, .statistics, .lent, .rewound: continue  // a reader has no group and copies: only errors
                }
            }
            return messages
        }
    }
}
