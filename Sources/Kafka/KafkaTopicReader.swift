package import Logging
import Foundation

/// Reads every partition of one topic from the beginning, outside any consumer group (`assign`,
/// never `subscribe`, never committing): for compacted topics such as the app-states topic.
///
/// A dedicated poll thread feeds ``events``; ``ConsumerEvent/caughtUp`` is reported once every
/// partition has been read to its end, and reading then continues with new records.
package final class KafkaTopicReader: Sendable {
    /// State shared with the poll thread.
    private let core: ConsumerCore
    /// The reader's events, in order; ends after ``close()``.
    package let events: KafkaConsumerEvents

    /// Creates the reader for `topic` and starts reading.
    ///
    /// - Parameter configuration: `groupID` is ignored: a private, never-used group ID is set because
    ///   librdkafka's consumer API needs one.
    package init(configuration: ConsumerConfiguration, topic: String, logger: Logger) throws(KafkaError) {
        var configuration = configuration
        configuration.groupID = "\(configuration.clientID)-reader-\(UUID().uuidString)"
        core = try ConsumerCore(configuration: configuration, mode: .reader(topic: topic), logger: logger)
        events = KafkaConsumerEvents(stream: core.stream, intake: core.intake)
        core.start()
    }

    deinit {
        core.requestClose(waiter: nil)
    }

    /// Stops the poll thread, destroys the handle and ends ``events``.
    package func close() async {
        await withCheckedContinuation { continuation in
            core.requestClose(waiter: continuation)
        }
    }
}
