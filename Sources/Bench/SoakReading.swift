import Dispatcher
import DispatcherService
import Foundation
import JSON
import Kafka
import Logging
import Records

/// Whole-topic reads for `bench soak`.
enum SoakReading {
    /// Every record of `topic` from its beginning to its end, as a reader with `isolation` sees it.
    static func readToEnd(_ topic: String, on bootstrap: String, _ isolation: IsolationLevel, limit: Duration = .seconds(300)) async throws -> [KafkaMessage] {
        var configuration = ConsumerConfiguration(bootstrapServers: bootstrap, groupID: "unused")
        configuration.isolationLevel = isolation
        configuration.properties = ["fetch.wait.max.ms": "10"]
        let reader = try KafkaTopicReader(configuration: configuration, topic: topic, logger: SoakRun.logger)
        let deadline = ContinuousClock.now + limit
        var messages: [KafkaMessage] = []
        var caughtUp = false
        reading: for await event in reader.events {
            switch event {
            case .messages(let batch): messages += batch
            case .caughtUp:
                caughtUp = true
                break reading
            default: break
            }
            if ContinuousClock.now > deadline { break }
        }
        await reader.close()
        guard caughtUp else { throw BenchError("reading \(topic) to its end took more than \(limit)") }
        return messages
    }
}

extension KafkaMessage {
    /// The value of the first header named `name`, as text.
    func headerText(_ name: String) -> String? {
        headers.first { $0.name == name }.flatMap { $0.value.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// The value as a JSON object.
    var jsonObject: JSONObject? {
        value.flatMap { try? JSONValue(parsing: $0) }?.objectValue
    }

    /// The key as text.
    var keyText: String {
        key.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}
