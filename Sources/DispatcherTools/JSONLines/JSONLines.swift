package import Dispatcher
import Foundation
import JSON
package import Notifications
package import Records

/// The JSON-lines record format of the `dispatch` command (docs/rules.md, "Offline"): one record per line,
/// `{"topic": T, "key": K, "headers": {NAME: VALUE}, "value": V, "timestamp": MS}` (or
/// `"rawValue": "exact bytes"`; `headers` may also be a list of `[NAME, VALUE]` pairs); a line whose
/// `topic` is the responses topic is a response (SEMANTICS section 10), one whose `topic` is a
/// state table's updates that table (section 11.2), one without `topic` or on the requests topic a
/// request; any other `topic` is not a record (``readTopics(_:)``).
package enum JSONLines {
    /// The nesting a line may have: four times a payload's limit.
    package static let maximumLineDepth = JSONValue.maximumDepth * 4

    /// Whether `line` is blank (only spaces, tabs and carriage returns).
    package static func isBlank(_ line: some Collection<UInt8>) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }

    /// Decodes one input line into a request record from `source`, whatever its `topic`.
    ///
    /// `value` (any JSON) becomes its compact serialisation, `"value": null` the bytes `null`;
    /// `rawValue` (a string) gives the exact bytes; neither is an empty value. Header values are
    /// strings, or numbers taken as their JSON text; every header is kept in the order written,
    /// repeats included (a repeated key of the `headers` object, or a name repeated in the list of
    /// pairs: SEMANTICS section 1). `timestamp` (milliseconds since the epoch, 0 to the end of
    /// year 9999) becomes the record's timestamp, the `now` of its processing (section 11.1).
    /// - Throws: `JSONLineError` for a line that is not such an object.
    package static func decodeRequest(_ line: some Collection<UInt8>, source: TopicPartitionOffset) throws(JSONLineError) -> RequestRecord {
        try decode(line, source: source).record
    }

    /// Decodes input line `offset` (from 0, blank lines counted) into the record `dispatch` takes
    /// it for: a response from `topics.responses` when the line's `topic` is that topic, else a
    /// request from `topics.requests` (a state table's line too: the caller tells them apart);
    /// partition 0, offset `offset`.
    /// - Throws: `JSONLineError` for a line that is not a record, or whose `topic` is not one of
    ///   ``readTopics(_:)``.
    package static func decode(
        _ line: some Collection<UInt8>, offset: Int, topics: TopicSettings
    ) throws(JSONLineError) -> RequestRecord {
        var (topic, record) = try decode(line, source: TopicPartitionOffset(topic: topics.requests, partition: 0, offset: Int64(offset)))
        try checkTopic(topic, topics: topics)
        if topic == topics.responses { record.source.topic = topics.responses }
        return record
    }

    /// The topics `dispatch` and `explain` read lines of, as configured: the requests topic (a
    /// line without `topic` is a request too), the responses topic, then the state tables the
    /// configuration enables: app states (only when `topics.appStates` is set), devices (unless
    /// `topics.devices` is `""`), channels, activities, stored notifications and badges. Each name
    /// once.
    package static func readTopics(_ topics: TopicSettings) -> [String] {
        let all = [
            topics.requests, topics.responses, topics.appStates, topics.devices, topics.channels, topics.activities, topics.stored,
            topics.badges,
        ]
        var names: [String] = []
        for name in all.compactMap({ $0 }) where !names.contains(name) { names.append(name) }
        return names
    }

    /// Refuses a line's `topic` that is not one of ``readTopics(_:)`` (nil, no `topic`, is a
    /// request): a misspelt topic, or the app-states topic when `topics.appStates` is not set,
    /// would otherwise be taken for a request and end as a `MissingTopic` dead letter.
    /// - Throws: `JSONLineError` naming the topic and the topics read.
    package static func checkTopic(_ topic: String?, topics: TopicSettings) throws(JSONLineError) {
        guard let topic else { return }
        let read = readTopics(topics)
        guard !read.contains(topic) else { return }
        var names = read.map { $0 == topics.requests ? "\($0) (also a line without topic)" : $0 }
        let last = names.removeLast()
        let list = names.isEmpty ? last : "\(names.joined(separator: ", ")) and \(last)"
        throw JSONLineError(
            "unknown topic \"\(topic)\"; the topics read are \(list)"
                + (topics.appStates == nil ? " (app states only when topics.appStates is set)" : ""))
    }

    /// Decodes one input line into its `topic` (nil when the line has none) and its record from
    /// `source`, as ``decodeRequest(_:source:)`` does.
    /// - Throws: `JSONLineError` for a line that is not such an object.
    package static func decode(
        _ line: some Collection<UInt8>, source: TopicPartitionOffset
    ) throws(JSONLineError) -> (topic: String?, record: RequestRecord) {
        let parsed: JSONValue
        do {
            // Deeper than a payload may be, so that a too-deep value becomes the dead letter it
            // would be in Kafka (InvalidPayload) rather than an invalid line.
            parsed = try JSONValue(parsing: line, maxDepth: Self.maximumLineDepth)
        } catch {
            throw JSONLineError("not JSON: \(error)")
        }
        guard let object = parsed.objectValue else { throw JSONLineError("expected a JSON object, found \(parsed.typeName)") }
        for key in object.keys where !["topic", "key", "headers", "value", "rawValue", "timestamp"].contains(key) {
            throw JSONLineError("unknown field \"\(key)\"; expected topic, key, headers, value, rawValue or timestamp")
        }
        let topic: String?
        switch object["topic"] {
        case .none, .null?: topic = nil
        case .string(let name)?: topic = name
        case .some: throw JSONLineError("topic must be a string")
        }
        let key: [UInt8]?
        switch object["key"] {
        case nil, .null?: key = nil
        case .string(let text)?: key = Array(text.utf8)
        case let other?: throw JSONLineError("key must be a string or null, found \(other.typeName)")
        }
        let value: [UInt8]
        switch (object["value"], object["rawValue"]) {
        case (.some, .some):
            throw JSONLineError("give value or rawValue, not both")
        case (.some(let json), nil):
            value = json.serialized()
        case (nil, .some(.string(let raw))):
            value = Array(raw.utf8)
        case (nil, .some(let other)):
            throw JSONLineError("rawValue must be a string, found \(other.typeName)")
        case (nil, nil):
            value = []
        }
        var headersValue = object["headers"]
        if case .object? = headersValue {
            // The tree keeps the last of a repeated key; a repeat matters here (DuplicateHeaders),
            // so the headers are read again from a parse that keeps every member.
            let repeats = try? JSONValue(parsingKeepingRepeatedKeys: Array(line), maxDepth: Self.maximumLineDepth)
            headersValue = repeats?.objectValue?.members.last { $0.key == "headers" }?.value ?? headersValue
        }
        return (
            topic,
            RequestRecord(
                key: key, headers: try headers(headersValue), value: value, source: source,
                timestamp: try timestamp(object["timestamp"]))
        )
    }

    /// The last millisecond RFC 3339 can write: 9999-12-31T23:59:59.999Z.
    package static let latestTimestamp: Int64 = 253_402_300_799_999

    /// The `timestamp` of an input line: an integer of milliseconds from 0 to ``latestTimestamp``.
    private static func timestamp(_ value: JSONValue?) throws(JSONLineError) -> Date? {
        guard let value, !value.isNull else { return nil }
        guard let number = value.numberValue, number.isInteger, let milliseconds = Int64(number.text),
            (0...latestTimestamp).contains(milliseconds)
        else {
            throw JSONLineError("timestamp must be an integer of milliseconds since the epoch from 0 to \(latestTimestamp), found \(value.typeName) \(String(decoding: value.serialized(), as: UTF8.self))")
        }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
    }

    /// The headers of an input line: an object of names to values, or a list of `[name, value]` pairs.
    private static func headers(_ value: JSONValue?) throws(JSONLineError) -> [RecordHeader] {
        guard let value, !value.isNull else { return [] }
        var pairs: [(name: String, value: JSONValue)] = []
        switch value {
        case .object(let object):
            pairs = object.members.map { ($0.key, $0.value) }
        case .array(let elements):
            for element in elements {
                guard case .array(let pair) = element, pair.count == 2, case .string(let name) = pair[0] else {
                    throw JSONLineError("a headers list must hold [name, value] pairs, found \(String(decoding: element.serialized(), as: UTF8.self))")
                }
                pairs.append((name, pair[1]))
            }
        default:
            throw JSONLineError("headers must be an object of strings or a list of [name, value] pairs")
        }
        var headers: [RecordHeader] = []
        headers.reserveCapacity(pairs.count)
        for (name, headerValue) in pairs {
            let text: String
            switch headerValue {
            case .string(let string): text = string
            case .number(let number): text = number.text
            default: throw JSONLineError("header \"\(name)\" must be a string or a number, found \(headerValue.typeName)")
            }
            headers.append(RecordHeader(name: name, value: Array(text.utf8)))
        }
        return headers
    }

    /// Encodes an output record as one line (no newline): deliveries, launches, actions, feedback,
    /// activities and stored records with `value` (their JSON as is; `null` for a tombstone), dead
    /// letters with `rawValue` (the record's original bytes).
    package static func encode(_ record: OutputRecord) -> [UInt8] {
        var line = Array(#"{"topic":"#.utf8) + JSONValue.string(record.topic).serialized()
        line += Array(#","key":"#.utf8)
        line += record.key.map { JSONValue.string(String(decoding: $0, as: UTF8.self)).serialized() } ?? Array("null".utf8)
        // An object, with a repeated header written as a repeated key, in the order received (section 1).
        line += Array(#","headers":{"#.utf8)
        for (position, header) in record.headers.enumerated() {
            if position > 0 { line.append(UInt8(ascii: ",")) }
            line += JSONValue.string(header.name).serialized()
            line.append(UInt8(ascii: ":"))
            line += header.value.map { JSONValue.string(String(decoding: $0, as: UTF8.self)).serialized() } ?? Array("null".utf8)
        }
        line.append(UInt8(ascii: "}"))
        switch record.kind {
        case .delivery, .launch, .action, .feedback, .activity, .stored, .badge:
            // The value is compact JSON written by the dispatcher: embedded as it is.
            line += Array(#","value":"#.utf8)
            line += record.value ?? RecordBytes("null")
        case .deadLetter, .command:
            line += Array(#","rawValue":"#.utf8)
            line += JSONValue.string(String(decoding: record.value ?? [], as: UTF8.self)).serialized()
        }
        line.append(UInt8(ascii: "}"))
        return line
    }
}
