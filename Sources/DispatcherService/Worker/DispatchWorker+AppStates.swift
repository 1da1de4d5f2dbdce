import Dispatcher
import Kafka
import Logging
import Synchronization

extension DispatchWorker {
    /// Starts reading the app-states topic from its beginning into the table, in `group`.
    /// - Returns: a signal notified when the table has caught up with the topic; the worker waits
    ///   for it before taking requests, so the first ones are decided with every state known.
    func startAppStates(topic: String, in group: inout DiscardingTaskGroup) throws -> CompletionSignal {
        try startStateTable(topic: topic, name: "app-states", in: &group, count: { self.appStates.count }) { message in
            guard case .invalid(let problem) = self.appStates.apply(key: message.key, value: message.value) else { return nil }
            return problem
        }
    }

    /// Starts reading the devices topic (SEMANTICS section 11.2) from its beginning into the
    /// table, in `group`, as ``startAppStates(topic:in:)`` does for the app states.
    func startDevices(topic: String, in group: inout DiscardingTaskGroup) throws -> CompletionSignal {
        try startStateTable(topic: topic, name: "devices", in: &group, count: { self.devices.count }) { message in
            guard case .invalid(let problem) = self.devices.apply(key: message.key, value: message.value) else { return nil }
            return problem
        }
    }

    /// Reads a compacted state topic from its beginning, outside the group, and keeps applying its
    /// records; a record `apply` refuses (it returns why) is logged and ignored.
    /// - Returns: a signal notified when the table has caught up with the topic.
    private func startStateTable(
        topic: String, name: String, in group: inout DiscardingTaskGroup, count: @escaping @Sendable () -> Int,
        apply: @escaping @Sendable (KafkaMessage) -> String?
    ) throws -> CompletionSignal {
        let reader = try KafkaTopicReader(configuration: settings.consumer, topic: topic, logger: logger)
        let caughtUp = CompletionSignal()
        group.addTask {
            await withTaskCancellationHandler {
                for await event in reader.events {
                    switch event {
                    case .messages(let messages):
                        for message in messages {
                            guard let problem = apply(message) else { continue }
                            self.logger.warning(
                                "\(name) record ignored",
                                metadata: [
                                    LogKey.topic: "\(topic)",
                                    LogKey.partition: "\(message.partition)",
                                    LogKey.offset: "\(message.offset)",
                                    LogKey.error: "\(problem)",
                                ]
                            )
                        }
                    case .caughtUp:
                        self.logger.info(
                            "\(name) table loaded", metadata: [LogKey.topic: "\(topic)", "devices": "\(count())"])
                        caughtUp.notify()
                    case .error(let error):
                        self.logger.warning("\(name) reader error", metadata: [LogKey.error: "\(error)"])
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
}
