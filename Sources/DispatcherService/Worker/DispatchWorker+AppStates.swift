import Dispatcher
import Kafka
import Logging
import Synchronization

extension DispatchWorker {
    /// Starts reading the app-states topic from its beginning into the table, in `group`.
    /// - Returns: a signal notified when the table has caught up with the topic; the worker waits
    ///   for it before taking requests, so the first ones are decided with every state known.
    func startAppStates(topic: String, in group: inout DiscardingTaskGroup) throws -> CompletionSignal {
        let reader = try KafkaTopicReader(configuration: settings.consumer, topic: topic, logger: logger)
        let caughtUp = CompletionSignal()
        group.addTask {
            await withTaskCancellationHandler {
                for await event in reader.events {
                    switch event {
                    case .messages(let messages):
                        self.applyAppStates(messages, topic: topic)
                    case .caughtUp:
                        self.logger.info(
                            "app-states table loaded",
                            metadata: [LogKey.topic: "\(topic)", "devices": "\(self.appStates.count)"]
                        )
                        caughtUp.notify()
                    case .error(let error):
                        self.logger.warning("app-states reader error", metadata: [LogKey.error: "\(error)"])
                    }
                }
            } onCancel: {
                // Closing ends `reader.events`, which ends the loop above. The close must be
                // awaited and a cancellation handler cannot await: hence the unstructured task.
                Task { await reader.close() }
            }
        }
        return caughtUp
    }

    private func applyAppStates(_ messages: [KafkaMessage], topic: String) {
        for message in messages {
            guard case .invalid(let problem) = appStates.apply(key: message.key, value: message.value) else { continue }
            logger.warning(
                "app-state record ignored",
                metadata: [
                    LogKey.topic: "\(topic)",
                    LogKey.partition: "\(message.partition)",
                    LogKey.offset: "\(message.offset)",
                    LogKey.error: "\(problem)",
                ]
            )
        }
    }
}
