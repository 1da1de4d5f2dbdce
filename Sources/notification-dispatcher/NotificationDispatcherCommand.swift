import ArgumentParser

/// The `notification-dispatcher` command-line tool: one subcommand per job.
@main
struct NotificationDispatcherCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notification-dispatcher",
        abstract: "Apple's remote-notification delivery rules on a Kafka pipeline.",
        subcommands: [DispatchCommand.self, BenchCommand.self]
    )
}
