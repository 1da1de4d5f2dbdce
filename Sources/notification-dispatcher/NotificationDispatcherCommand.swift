import ArgumentParser
import Kafka

/// The `notification-dispatcher` command-line tool: one subcommand per job.
@main
struct NotificationDispatcherCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notification-dispatcher",
        abstract: "Apple's remote-notification delivery rules on a Kafka pipeline.",
        // `--version`: the Kafka client linked in is what decides which brokers can be reached; the
        // malloc it runs on moves the CPU per record (docs/performance.md, "jemalloc").
        version: "notification-dispatcher, librdkafka \(KafkaLibrary.version) (\(KafkaLibrary.minimumVersion) or later required), malloc: \(MemoryAllocator.name)",
        subcommands: [
            ServeCommand.self,
            DevCommand.self,
            BrokerCommand.self,
            DispatchCommand.self,
            ExplainCommand.self,
            SendCommand.self,
            TopCommand.self,
        ]
    )
}
