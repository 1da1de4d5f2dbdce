import Foundation

/// RFC 3339 timestamps with milliseconds in UTC (`2026-11-22T03:04:05.678Z`).
enum Timestamp {
    /// `date` as RFC 3339 with milliseconds.
    static func rfc3339(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
