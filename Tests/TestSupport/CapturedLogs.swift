public import Logging
import Synchronization

/// A log that keeps every line it is given, for tests of what is logged (and what is not).
public final class CapturedLogs: Sendable {
    /// One line as logged.
    public struct Entry: Sendable, CustomStringConvertible {
        /// The level's name (`warning`, `error`...).
        public let level: String
        /// The message.
        public let message: String
        /// The metadata, values as text.
        public let metadata: [String: String]

        public var description: String { "\(level) \(message) \(metadata)" }
    }

    private let lines = Mutex<[Entry]>([])

    /// An empty log.
    public init() {}

    /// The lines so far, in order.
    public var entries: [Entry] { lines.withLock { $0 } }

    /// A logger whose lines (at `level` and above) are kept here.
    public func logger(label: String = "captured", level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in CapturingHandler(log: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ entry: Entry) {
        lines.withLock { $0.append(entry) }
    }

    /// A logger that drops everything: for tests whose failures are expected and checked otherwise.
    public static let silent = Logger(label: "silent") { _ in SwiftLogNoOpLogHandler() }
}

/// Hands every line to a `CapturedLogs`.
private struct CapturingHandler: LogHandler {
    let log: CapturedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        log.append(
            CapturedLogs.Entry(
                level: event.level.rawValue, message: event.message.description,
                metadata: merged.mapValues { $0.description }))
    }
}
