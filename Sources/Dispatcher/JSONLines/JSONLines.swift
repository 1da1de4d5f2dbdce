import JSON
public import Notifications

/// The JSON-lines record format of the `dispatch` command (ARCHITECTURE.md): one record per line,
/// `{"topic": T, "key": K, "headers": {NAME: VALUE}, "value": V}` (or `"rawValue": "exact bytes"`);
/// a line whose `topic` is the responses topic is a response (SEMANTICS section 10).
public enum JSONLines {
    /// The nesting a line may have: four times a payload's limit.
    public static let maximumLineDepth = JSONValue.maximumDepth * 4

    /// Whether `line` is blank (only spaces, tabs and carriage returns).
    public static func isBlank(_ line: some Collection<UInt8>) -> Bool {
        line.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }
    }

    /// Decodes one input line into a request record from `source`, whatever its `topic`.
    ///
    /// `value` (any JSON) becomes its compact serialisation, `"value": null` the bytes `null`;
    /// `rawValue` (a string) gives the exact bytes; neither is an empty value. Header values are
    /// strings, or numbers taken as their JSON text; of names differing only in case the last wins.
    /// - Throws: `JSONLineError` for a line that is not such an object.
    public static func decodeRequest(_ line: some Collection<UInt8>, source: RecordSource) throws(JSONLineError) -> RequestRecord {
        try decode(line, source: source).record
    }

    /// Decodes input line `offset` (from 0, blank lines counted) into the record `dispatch` takes
    /// it for: a response from `topics.responses` when the line's `topic` is that topic, else a
    /// request from `topics.requests` (whatever other topic it names); partition 0, offset `offset`.
    /// - Throws: `JSONLineError` for a line that is not a record.
    public static func decode(
        _ line: some Collection<UInt8>, offset: Int, topics: TopicSettings
    ) throws(JSONLineError) -> RequestRecord {
        var (topic, record) = try decode(line, source: RecordSource(topic: topics.requests, partition: 0, offset: Int64(offset)))
        if topic == topics.responses { record.source.topic = topics.responses }
        return record
    }

    /// Decodes one input line into its `topic` (nil when the line has none) and its record from
    /// `source`, as ``decodeRequest(_:source:)`` does.
    /// - Throws: `JSONLineError` for a line that is not such an object.
    public static func decode(
        _ line: some Collection<UInt8>, source: RecordSource
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
        for key in object.keys where !["topic", "key", "headers", "value", "rawValue"].contains(key) {
            throw JSONLineError("unknown field \"\(key)\"; expected topic, key, headers, value or rawValue")
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
        return (topic, RequestRecord(key: key, headers: try headers(object["headers"]), value: value, source: source))
    }

    /// The headers of an input line.
    private static func headers(_ value: JSONValue?) throws(JSONLineError) -> [RecordHeader] {
        guard let value, !value.isNull else { return [] }
        guard let object = value.objectValue else { throw JSONLineError("headers must be an object of strings") }
        var headers: [RecordHeader] = []
        for (name, headerValue) in object {
            let text: String
            switch headerValue {
            case .string(let string): text = string
            case .number(let number): text = number.text
            default: throw JSONLineError("header \"\(name)\" must be a string or a number, found \(headerValue.typeName)")
            }
            let lowered = name.lowercased()
            headers.removeAll { $0.name.lowercased() == lowered }
            headers.append(RecordHeader(name: name, value: Array(text.utf8)))
        }
        return headers
    }

    /// Encodes an output record as one line (no newline): deliveries, launches and actions with
    /// `value` (their JSON as is), dead letters with `rawValue` (the record's original bytes).
    public static func encode(_ record: OutputRecord) -> [UInt8] {
        var headers = JSONObject()
        for header in record.headers {
            headers[header.name] = header.value.map { .string(String(decoding: $0, as: UTF8.self)) } ?? .null
        }
        var line = Array(#"{"topic":"#.utf8) + JSONValue.string(record.topic).serialized()
        line += Array(#","key":"#.utf8)
        line += record.key.map { JSONValue.string(String(decoding: $0, as: UTF8.self)).serialized() } ?? Array("null".utf8)
        line += Array(#","headers":"#.utf8) + JSONValue.object(headers).serialized()
        switch record.kind {
        case .delivery, .launch, .action:
            // The value is compact JSON written by the dispatcher: embedded as it is.
            line += Array(#","value":"#.utf8) + (record.value ?? Array("null".utf8))
        case .deadLetter:
            line += Array(#","rawValue":"#.utf8)
            line += JSONValue.string(String(decoding: record.value ?? [], as: UTF8.self)).serialized()
        }
        line.append(UInt8(ascii: "}"))
        return line
    }
}
