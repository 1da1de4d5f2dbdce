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

    /// Starts reading the tables every worker keeps whole (docs/worker.md, "Partitioned state"):
    /// the channels topic, and the activities topic as the index of channel subscriptions; waits
    /// (up to 30 s each) until both caught up, so that the first broadcasts find them.
    func startWholeTables(of state: PartitionedState, in group: inout DiscardingTaskGroup) async throws {
        let channels = try startStateTable(topic: state.topics.channels, name: "channels", in: &group, count: { state.channels.count }) {
            message in
            guard case .invalid(let problem) = state.channels.apply(key: message.key, value: message.value) else { return nil }
            state.ignored.withLock { $0[message.topic, default: 0] += 1 }
            return "\(problem)"
        }
        let index = try startStateTable(
            topic: state.topics.activities, name: "activity index", in: &group, count: { state.activityIndex.count }
        ) { message in
            // The owner logs and counts a malformed activities record when it restores it.
            _ = state.activityIndex.apply(key: message.key, value: message.value)
            return nil
        }
        for (signal, name) in [(channels, "channels"), (index, "activity index")] {
            if !(await wait(for: { signal.generation > 0 }, signal: signal, limit: .seconds(30))) {
                logger.warning("\(name) table not loaded after 30 s; starting anyway")
            }
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
                            "\(name) table loaded", metadata: [LogKey.topic: "\(topic)", "entries": "\(count())"])
                        caughtUp.notify()
                    case .error(let error):
                        self.logger.warning("\(name) reader error", metadata: [LogKey.error: "\(error)"])
                    case .assigned, .revoked, .lost, .statistics, .lent, .rewound:
                        continue  // a reader has no group and no statistics, copies its messages and never rewinds
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
