import ArgumentParser
import Foundation
import Logging

/// The `--log-level` and `--log-format` options, and the one-time set-up of swift-log for a command.
struct LoggingOptions: ParsableArguments {
    /// How log lines are written.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        /// One JSON object per line (for log collectors).
        case json
        /// swift-log's plain text lines (for people at a terminal).
        case text
    }

    @Option(
        name: .long,
        help: "trace, debug, info, notice, warning, error or critical (default: info, or LOG_LEVEL)."
    )
    var logLevel: String?

    @Option(
        name: .long,
        help: "json or text (default: text when standard error is a terminal, json otherwise)."
    )
    var logFormat: Format?

    /// Sets up logging to standard error and returns the command's logger.
    ///
    /// - Parameter defaultLevel: the level when neither `--log-level` nor `LOG_LEVEL` is given.
    func bootstrap(label: String, defaultLevel: Logger.Level = .info) throws -> Logger {
        let level = try resolvedLevel(environment: ProcessInfo.processInfo.environment, defaultLevel: defaultLevel)
        let format = resolvedFormat(isTerminal: isatty(STDERR_FILENO) == 1)
        LoggingSystem.bootstrap { label in
            switch format {
            case .json:
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            case .text:
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        }
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }

    /// The level: `--log-level`, else `LOG_LEVEL`, else `defaultLevel`.
    /// - Throws: `ValidationError` for a name that is not a level.
    func resolvedLevel(environment: [String: String], defaultLevel: Logger.Level) throws -> Logger.Level {
        guard let text = logLevel ?? environment["LOG_LEVEL"] else { return defaultLevel }
        guard let parsed = Logger.Level(rawValue: text.lowercased()) else {
            throw ValidationError("unknown log level \"\(text)\"")
        }
        return parsed
    }

    /// The format: `--log-format`, else text on a terminal and JSON lines otherwise.
    func resolvedFormat(isTerminal: Bool) -> Format {
        logFormat ?? (isTerminal ? .text : .json)
    }
}
