import ArgumentParser

/// The `notification-dispatcher` command-line tool: one subcommand per job.
@main
struct NotificationDispatcherCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notification-dispatcher",
        abstract: "Apple's remote-notification delivery rules on a Kafka pipeline.",
        subcommands: [
            ServeCommand.self,
            DevCommand.self,
            BrokerCommand.self,
            DispatchCommand.self,
            ExplainCommand.self,
            SendCommand.self,
            BenchCommand.self,
            TopCommand.self,
        ]
    )
}
