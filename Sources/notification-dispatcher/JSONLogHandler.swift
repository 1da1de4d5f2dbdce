import Foundation
import Logging
import Synchronization

/// A swift-log handler writing one JSON object per line to standard error:
/// `{"timestamp", "level", "label", "message", "source", "metadata": {...}}`.
///
/// Only what the code logs goes out: the worker never logs payloads or device tokens
/// (STYLE.md, point 12), and this handler adds nothing from the records.
struct JSONLogHandler: LogHandler {
    /// Serialises writes so lines from concurrent tasks never interleave.
    private static let output = Mutex(())

    /// The logger's label.
    let label: String
    /// Metadata of every line from this logger.
    var metadata: Logger.Metadata = [:]
    /// The lowest level written.
    var logLevel: Logger.Level = .info

    /// A handler for `label`.
    init(label: String) {
        self.label = label
    }

    /// One metadata value.
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one line.
    func log(event: LogEvent) {
        let line = Self.line(
            date: Date(), level: event.level, label: label, message: "\(event.message)", source: event.source,
            metadata: metadata.merging(event.metadata ?? [:]) { $1 }
        )
        Self.output.withLock { _ in
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// The JSON line (with its newline) for one event.
    static func line(
        date: Date, level: Logger.Level, label: String, message: String, source: String, metadata: Logger.Metadata
    ) -> String {
        var object: [String: Any] = [
            "timestamp": date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            "level": level.rawValue,
            "label": label,
            "message": message,
            "source": source,
        ]
        if !metadata.isEmpty { object["metadata"] = metadata.mapValues(Self.json) }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return #"{"level":"error","message":"unserialisable log line"}"# + "\n"
        }
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let string): string
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(json)
        case .dictionary(let dictionary): dictionary.mapValues(json)
        }
    }
}
