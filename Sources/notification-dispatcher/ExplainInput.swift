import Dispatcher
import DispatcherTools
import Foundation
import JSON
import Notifications
import Records

/// What `explain` reads, turned into the one record it explains: a line of a JSON-lines file as
/// `dispatch` reads it (a response when its `topic` is the responses topic, else a request), an
/// `.apns` file (Simulator's format), a bare payload, or a bare response value; then the command's
/// flags set headers and the key over what the input gave.
struct ExplainInput {
    /// The kinds of input.
    enum Format: String {
        /// A JSON-lines record (`{"topic", "key", "headers", "value"}`): a request, or a response when its topic is the responses topic.
        case jsonLines = "json-lines"
        /// Simulator's `.apns` file: a payload with `"Simulator Target Bundle"`.
        case apns
        /// A payload alone.
        case payload
        /// A response's value alone (`{"notification": ..., "actionIdentifier" | "mediaCommand": ...}`).
        case response
    }

    /// An input that cannot be explained, in one sentence.
    struct Problem: Error, CustomStringConvertible {
        /// The sentence.
        let description: String
    }

    /// The key `.apns` files name the app's bundle ID with.
    static let simulatorBundleKey = "Simulator Target Bundle"
    /// The device token used when the input gives none: Simulator files and payloads have none.
    static let standInToken = String(repeating: "0", count: 64)

    /// The record to explain: its source topic says whether it is a request or a response.
    let record: RequestRecord
    /// Which kind of input it was.
    let format: Format
    /// The input's line (from 1), for JSON-lines input.
    let line: Int?
    /// What the reader filled in or changed, for a person.
    let notes: [String]
    /// For a line of a JSON-lines file: the lines before it, which `dispatch` would have read
    /// first (their state-table records and accepted requests count for this one, SEMANTICS 11.2).
    private(set) var earlierLines: [[UInt8]] = []
    /// For a line of a JSON-lines file: the line itself, as written.
    private(set) var text: [UInt8] = []

    /// The header and key overrides given as flags.
    struct Overrides {
        /// `--topic`.
        var topic: String?
        /// `--push-type`.
        var pushType: String?
        /// `--app-state`.
        var appState: String?
        /// `--token`.
        var token: String?
        /// `--header NAME=VALUE`, in order.
        var headers: [(name: String, value: String)] = []

        /// The headers the flags set, in order: `--header` first, then the named flags.
        var all: [(name: String, value: String)] {
            headers + [("apns-topic", topic), ("apns-push-type", pushType), ("app-state", appState)].compactMap { name, value in
                value.map { (name, $0) }
            }
        }
    }

    /// Reads `data` as one record: a request from `topics.requests`, or a response from
    /// `topics.responses` (a JSON-lines line naming that topic, or a bare response value).
    /// - Parameters:
    ///   - isAPNSFile: whether the file name ends in `.apns`.
    ///   - line: the line to explain (from 1) of a JSON-lines file with several records.
    /// - Throws: ``Problem`` for an empty input, a line out of range, or a line that is not a record.
    init(
        _ data: [UInt8], isAPNSFile: Bool, line requestedLine: Int?, overrides: Overrides, topics: TopicSettings
    ) throws(Problem) {
        let requestsTopic = topics.requests
        guard !JSONLines.isBlank(data.filter { $0 != UInt8(ascii: "\n") }) else {
            throw Problem(description: "There is nothing to explain: the input is empty.")
        }
        var notes: [String] = []
        let whole = try? JSONValue(parsing: data, maxDepth: JSONLines.maximumLineDepth)
        let object = whole?.objectValue
        var record: RequestRecord
        if isAPNSFile || object?[Self.simulatorBundleKey] != nil {
            guard let object else { throw Problem(description: "The .apns file is not a JSON object.") }
            var payload = object
            let bundle = payload.removeValue(forKey: Self.simulatorBundleKey)
            var headers: [RecordHeader] = []
            if let bundleID = bundle?.stringValue {
                headers.append(RecordHeader(name: "apns-topic", value: bundleID))
                notes.append("apns-topic \(bundleID), from \"\(Self.simulatorBundleKey)\" (removed from the payload)")
            } else {
                notes.append("the file has no \"\(Self.simulatorBundleKey)\": give the app's bundle ID with --topic")
            }
            record = Self.payloadRecord(JSONValue.object(payload).serialized(), headers: headers, topic: requestsTopic)
            self.format = .apns
            notes.append("the payload is measured in its compact form (\(record.value?.count ?? 0) bytes)")
        } else if let object, object["notification"] != nil, object["aps"] == nil {
            // A response's value: the notification it answers is under "notification", and a
            // payload would have "aps" at the top. Explained as if read from the responses topic.
            record = Self.payloadRecord(JSONValue.object(object).serialized(), headers: [], topic: topics.responses)
            self.format = .response
            notes.append("read as a response (it has \"notification\"), as if from \(topics.responses)")
        } else if let object, object["aps"] != nil || (overrides.topic != nil && !Self.isRecordShaped(object)) {
            record = Self.payloadRecord(JSONValue.object(object).serialized(), headers: [], topic: requestsTopic)
            self.format = .payload
            notes.append("the payload is measured in its compact form (\(record.value?.count ?? 0) bytes)")
        } else if object == nil, overrides.topic != nil {
            // Not JSON at all, given as a payload: validation says what is wrong with it.
            record = Self.payloadRecord(data, headers: [], topic: requestsTopic)
            self.format = .payload
        } else {
            let lines = JSONLinesDispatch.lines(of: data)
            let (offset, text): (Int, [UInt8])
            if requestedLine == nil, let object, Self.isRecordShaped(object) {
                // One record, perhaps written over several lines: it counts from its first line.
                (offset, text) = (lines.firstIndex { !JSONLines.isBlank($0) } ?? 0, data)
            } else {
                (offset, text) = try Self.pick(lines, line: requestedLine)
            }
            do {
                // The record `dispatch` takes the line for: a response when its topic is the responses topic.
                record = try JSONLines.decode(text, offset: offset, topics: topics)
            } catch {
                throw Problem(description: "Line \(offset + 1) is not a record: \(error.message).")
            }
            self.format = .jsonLines
            self.line = offset + 1
            self.notes = notes + Self.apply(overrides, to: &record)
            self.record = record
            self.earlierLines = Array(lines.prefix(offset))
            self.text = text
            return
        }
        if requestedLine.map({ $0 != 1 }) ?? false {
            throw Problem(description: "--line picks a line of a JSON-lines file; this input is \(Self.summary(format, isResponse: false)).")
        }
        if overrides.token == nil {
            notes.append("device token: a stand-in (\(Self.standInToken.prefix(8))…); give one with --token")
        }
        self.line = nil
        self.notes = notes + Self.apply(overrides, to: &record)
        self.record = record
    }

    /// The input in a few words, for a person: its format, and for a JSON-lines record whether it
    /// was explained as a response (`isResponse`, the dispatcher's word) or a request.
    func summary(isResponse: Bool) -> String { Self.summary(format, isResponse: isResponse) }

    /// An input of `format` in a few words.
    private static func summary(_ format: Format, isResponse: Bool) -> String {
        switch format {
        case .jsonLines: "a JSON-lines \(isResponse ? "response" : "request") record"
        case .apns: "a Simulator .apns file"
        case .payload: "a payload"
        case .response: "a response value"
        }
    }

    /// Whether `object` has only the fields of a JSON-lines record (and at least one).
    private static func isRecordShaped(_ object: JSONObject) -> Bool {
        !object.isEmpty && object.keys.allSatisfy { ["topic", "key", "headers", "value", "rawValue", "timestamp"].contains($0) }
    }

    /// A record of `payload` with `headers` and the stand-in token, as line 0 of `topic`.
    private static func payloadRecord(_ payload: [UInt8], headers: [RecordHeader], topic: String) -> RequestRecord {
        RequestRecord(
            key: Array(standInToken.utf8), headers: headers, value: payload, source: TopicPartitionOffset(topic: topic, partition: 0, offset: 0))
    }

    /// The line to explain: `line` (from 1) when given, else the only non-blank one.
    private static func pick(_ lines: [[UInt8]], line: Int?) throws(Problem) -> (offset: Int, text: [UInt8]) {
        if let line {
            guard line >= 1, line <= lines.count else {
                throw Problem(description: "--line \(line) is out of range: the input has \(lines.count) line(s).")
            }
            guard !JSONLines.isBlank(lines[line - 1]) else { throw Problem(description: "Line \(line) is blank.") }
            return (line - 1, lines[line - 1])
        }
        let records = lines.indices.filter { !JSONLines.isBlank(lines[$0]) }
        guard records.count == 1, let only = records.first else {
            throw Problem(description: "The input has \(records.count) records; pick the one to explain with --line N.")
        }
        return (only, lines[only])
    }

    /// Applies the flags: the headers they set replace the input's of the same name (case aside),
    /// and a name given twice on the command line stays twice, so `--header apns-priority=10
    /// --header apns-priority=5` writes a repeated header (`DuplicateHeaders`, SEMANTICS section 1),
    /// also over a Simulator `.apns` file, which has no headers of its own. `--token` sets the key.
    /// - Returns: notes on what changed.
    private static func apply(_ overrides: Overrides, to record: inout RequestRecord) -> [String] {
        var notes: [String] = []
        let replaced = Set(overrides.all.map { $0.name.lowercased() })
        record.headers.removeAll { replaced.contains($0.name.lowercased()) }
        for (name, value) in overrides.all {
            record.headers.append(RecordHeader(name: name, value: value))
            notes.append("header \(name): \(value) (from the command line)")
        }
        if let token = overrides.token {
            record.key = RecordBytes(token)
            notes.append("device token from --token")
        }
        return notes
    }
}
