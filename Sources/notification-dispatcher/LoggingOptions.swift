import ArgumentParser
import Foundation
import Logging

/// The `--log-level` option, and the one-time set-up of swift-log for a command.
struct LoggingOptions: ParsableArguments {
    @Option(
        name: .long,
        help: "trace, debug, info, notice, warning, error or critical (default: info, or LOG_LEVEL)."
    )
    var logLevel: String?

    /// Sets up logging to standard error and returns the command's logger.
    ///
    /// - Parameter defaultLevel: the level when neither `--log-level` nor `LOG_LEVEL` is given.
    func bootstrap(label: String, defaultLevel: Logger.Level = .info) throws -> Logger {
        let text = logLevel ?? ProcessInfo.processInfo.environment["LOG_LEVEL"]
        let level: Logger.Level
        if let text {
            guard let parsed = Logger.Level(rawValue: text.lowercased()) else {
                throw ValidationError("unknown log level \"\(text)\"")
            }
            level = parsed
        } else {
            level = defaultLevel
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }
}
