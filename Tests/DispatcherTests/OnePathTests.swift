import Dispatcher
import DispatcherTools
import Foundation
import JSON
import Notifications
import Records
import TestSupport
import Testing

/// Every request record goes through one path: the one decision on a view of its bytes, and
/// the one writer (``Dispatcher/decide(_:tables:now:into:)``), in the worker and offline alike.
/// These tests hold that path to the contract's outputs over every sample line and variants of
/// every push type, invalid record, header form, escape and repeated key, in every JSON style a
/// provider writes: compact (Java, Go), spaced (Python's `json.dumps`) and pretty (indented
/// lines). A payload's style changes nothing a device sees: the delivery carries the compact form
/// the tree would write (``JSONValue/serialized()``), byte for byte.
@Suite("One path for every record, whatever the JSON style")
struct OnePathTests {
    /// One output as bytes, for comparing and for messages.
    struct Bytes: Equatable, CustomStringConvertible {
        var topic: String
        var kind: OutputRecord.Kind
        var key: [UInt8]?
        var headers: [(name: [UInt8], value: [UInt8]?)]
        var value: [UInt8]?

        static func == (left: Bytes, right: Bytes) -> Bool {
            left.topic == right.topic && left.kind == right.kind && left.key == right.key && left.value == right.value
                && left.headers.count == right.headers.count
                && zip(left.headers, right.headers).allSatisfy { $0.name == $1.name && $0.value == $1.value }
        }

        var description: String {
            let headers = headers.map { "\(String(decoding: $0.name, as: UTF8.self))=\($0.value.map { String(decoding: $0, as: UTF8.self) } ?? "null")" }
            return "\(kind) to \(topic), key \(key.map { String(decoding: $0, as: UTF8.self) } ?? "null"), headers \(headers), "
                + "value \(value.map { String(decoding: $0, as: UTF8.self) } ?? "null")"
        }

        /// The same output with an extension report's `elapsedMs` written as 0.
        var withoutElapsedTime: Bytes {
            var copy = self
            if let value, let text = Optional(String(decoding: value, as: UTF8.self)), let range = text.range(of: #""elapsedMs":"#) {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                copy.value = Array(text.replacingCharacters(in: range.upperBound..<digits.endIndex, with: "0").utf8)
            }
            return copy
        }

        /// The value of header `name`, as text.
        func header(_ name: String) -> String? {
            headers.first { $0.name == Array(name.utf8) }.flatMap { $0.value.map { String(decoding: $0, as: UTF8.self) } }
        }

        init(_ record: OutputRecord) {
            topic = record.topic
            kind = record.kind
            key = record.key.map { Array($0) }
            headers = record.headers.map { (Array($0.name.utf8), $0.value.map { Array($0) }) }
            value = record.value.map { Array($0) }
        }
    }

    /// Apps for every kind of record: one without extensions, one whose category `EDIT` runs one
    /// (its mutable alerts go the owned way), a VoIP app.
    /// The longest extension deadline: on a busy machine the rewrite's run waits for the
    /// cooperative pool, and a deadline met on one side only would tell the styles apart.
    static let yaml = """
        dispatch: {deadline: 10m}
        http: {livenessLimit: 15m}
        apps:
          com.example.news:
            categories:
              EDIT: {serviceExtension: {kind: rewrite, set: {aps.alert.title: edited}}}
          com.example.app: {}
          com.example.voip: {}
          com.example.shop: {}
          com.example.game: {}
          com.example.bank: {}
        """

    static let tokens = (1...6).map { TestRecord.token(UInt8($0 * 17)) }

    /// Every request line of Config/samples (responses and state lines left out), then variants
    /// of each push type, header form and invalid request.
    static func records(topics: TopicSettings) throws -> [RequestRecord] {
        let samples = BuiltBinary.packageRoot().appendingPathComponent("Config/samples")
        var records: [RequestRecord] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: samples.path).sorted() where file.hasSuffix(".jsonl") {
            let lines = try String(contentsOf: samples.appendingPathComponent(file), encoding: .utf8).split(separator: "\n")
            for (offset, line) in lines.enumerated() where !JSONLines.isBlank(Array(line.utf8)) {
                guard let record = try? JSONLines.decode(Array(line.utf8), offset: offset, topics: topics),
                    record.source.topic == topics.requests, Self.isRequest(line)
                else { continue }
                records.append(record)
            }
        }
        records += variants()
        return records
    }

    /// Whether a sample line is a request rather than a state table's line (those name their topic).
    static func isRequest(_ line: Substring) -> Bool {
        !line.contains(#""topic""#) || line.contains(#""topic":"notifications.requests""#)
    }

    static func variants() -> [RequestRecord] {
        let payloads: [String] = [
            #"{"aps":{"alert":"Hello"}}"#,
            #"{"aps":{"alert":{"title":"T","body":"B"},"sound":"default","badge":2},"deep":{"a":[1,2.5e3,null,true]}}"#,
            #"{"aps":{"alert":"Hi","mutable-content":1}}"#,
            #"{"aps":{"alert":"Edit me","mutable-content":1,"category":"EDIT"}}"#,
            #"{"aps":{"content-available":1},"sync":"now"}"#,
            #"{"aps":{"badge":0}}"#,
            #"{"aps":{"sound":{"critical":1,"name":"a.caf","volume":0.5}}}"#,
            #"{"aps":{"alert":"Esc \"quoted\" \u00e9 \/ \n","interruption-level":"time-sensitive","relevance-score":0.4}}"#,
            #"{"aps":{"alert":"x","thread-id":"t1","target-content-id":"c"}}"#,
            #"{ "aps" : { "alert" : "not compact" } }"#,
            #"{"aps":{"alert":"x"}"#,
            #"{"aps":"not an object"}"#,
            #"[1,2]"#,
            "",
            #"{"aps":{"alert":""# + String(repeating: "a", count: 5_000) + #""}}"#,
        ]
        let headerSets: [[(String, String)]] = [
            [("apns-topic", "com.example.app")],
            [("apns-topic", "com.example.app"), ("apns-id", "6F1C2A3E-0000-4000-8000-0000000000AB"), ("apns-priority", "10")],
            [("APNS-TOPIC", "com.example.news"), ("apns-push-type", "alert"), ("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")],
            [("apns-topic", "com.example.app"), ("apns-push-type", "background"), ("apns-priority", "5"), ("apns-collapse-id", "c1")],
            [("apns-topic", "com.example.voip.voip"), ("apns-push-type", "voip"), ("apns-expiration", "0")],
            [("apns-topic", "com.example.app"), ("apns-priority", "7")],
            [("apns-topic", "com.example.app"), ("apns-topic", "com.example.app")],
            [("apns-push-type", "alert")],
            [("apns-topic", "com.example.unknown")],
            [("apns-topic", "com.example.app"), ("apns-id", "not-a-uuid")],
            [("apns-topic", "com.example.app"), ("apns-expiration", "1")],
            [("apns-topic", "com.example.app"), ("x-custom", "kept"), ("apns-push-type", "alert")],
        ]
        var records: [RequestRecord] = []
        for (index, payload) in payloads.enumerated() {
            for (set, headers) in headerSets.enumerated() {
                let offset = Int64(10_000 + index * 100 + set)
                records.append(TestRecord(token: tokens[(index + set) % tokens.count], headers: headers, value: Array(payload.utf8), offset: offset).requestRecord)
            }
        }
        // Keys APNs refuses, and one in capitals (folded to lowercase in the outputs).
        for (offset, token) in [nil, "abc", String(repeating: "zz", count: 32), tokens[0].uppercased()].enumerated() {
            records.append(TestRecord(token: token, headers: [("apns-topic", "com.example.app")], value: Array(#"{"aps":{"alert":"k"}}"#.utf8), offset: Int64(20_000 + offset)).requestRecord)
        }
        return records
    }

    /// The styles a provider's JSON writer has.
    enum Style: String, CaseIterable, CustomStringConvertible {
        case compact, spaced, pretty
        var description: String { rawValue }
    }

    /// `text` in `style`, by whitespace outside strings only (escapes, repeated keys and number
    /// spellings kept as written): `, ` and `: ` for spaced, lines indented by two for pretty.
    static func restyled(_ text: [UInt8], _ style: Style) -> [UInt8] {
        guard style != .compact, (try? JSONValue(parsing: text)) != nil else { return text }
        var output: [UInt8] = []
        var depth = 0
        var inString = false
        var escaped = false
        func newline() { output.append(0x0A); output += Array(repeating: 0x20, count: depth * 2) }
        for (index, byte) in text.enumerated() {
            if inString {
                output.append(byte)
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                output.append(byte)
            case UInt8(ascii: ","):
                output.append(byte)
                if style == .pretty { newline() } else { output.append(0x20) }
            case UInt8(ascii: ":"):
                output += [byte, 0x20]
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                output.append(byte)
                let closesAtOnce = index + 1 < text.count && (text[index + 1] == UInt8(ascii: "}") || text[index + 1] == UInt8(ascii: "]"))
                depth += 1
                if style == .pretty, !closesAtOnce { newline() }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                let opensJustBefore = index > 0 && (text[index - 1] == UInt8(ascii: "{") || text[index - 1] == UInt8(ascii: "["))
                depth -= 1
                if style == .pretty, !opensJustBefore { newline() }
                output.append(byte)
            default:
                output.append(byte)
            }
        }
        return style == .pretty ? output + [0x0A] : output
    }

    /// `record` with its value in `style`.
    static func restyled(_ record: RequestRecord, _ style: Style) -> RequestRecord {
        var styled = record
        styled.value = record.value.map { RecordBytes(restyled(Array($0), style)) }
        return styled
    }

    /// The tables of these tests: each token in its own app state.
    static func tables() -> StateTables {
        let appStates = AppStatesTable()
        for (index, token) in Self.tokens.enumerated() {
            let state = ["notRunning", "background", "foreground", "forceQuit", "notRunning", "background"][index]
            appStates.apply(key: RecordBytes(token), value: RecordBytes(#"{"state":"\#(state)"}"#))
        }
        return StateTables(appStates: appStates)
    }

    /// A fixed time: `receivedAt` and `deliveredAt` are written from it.
    static let now = Date(timeIntervalSince1970: 1_795_000_000.125)

    /// What the worker writes for `record`: decided on its view, its first output, then the one
    /// that follows it; nil when it waits (an extension, a stored notification, a Live Activity).
    static func written(_ record: RequestRecord, by dispatcher: Dispatcher, tables: StateTables, topics: TopicSettings) -> [Bytes]? {
        var output = OutputBuffer()
        return record.withView { view -> [Bytes]? in
            guard case .written(let written) = dispatcher.decide(view, tables: tables, now: now, into: &output) else { return nil }
            var outputs = [Bytes(output.outputRecord(of: view, topics: topics))]
            for index in 0..<written.following.count {
                dispatcher.writeFollowing(written.following[index], of: view, into: &output)
                outputs.append(Bytes(output.outputRecord(of: view, topics: topics)))
            }
            return outputs
        }
    }

    @Test("the worker's outputs are the offline dispatch's, for every record and style", arguments: Style.allCases)
    func workerAsOffline(_ style: Style) async throws {
        let configuration = try Configuration(yaml: Self.yaml)
        let dispatcher = try Fixture.dispatcher(Self.yaml)
        let topics = configuration.topics
        let records = try Self.records(topics: topics).map { Self.restyled($0, style) }
        var written = 0
        var launches = 0
        var deadLetters = 0
        var feedback = 0
        for record in records {
            let tables = Self.tables()
            guard let outputs = Self.written(record, by: dispatcher, tables: tables, topics: topics) else { continue }
            written += 1
            launches += outputs.filter { $0.kind == .launch }.count
            deadLetters += outputs[0].kind == .deadLetter ? 1 : 0
            feedback += outputs.filter { $0.kind == .feedback }.count
            let offline = await dispatcher.decide(record, tables: Self.tables(), now: Self.now).outputs.map(Bytes.init)
            #expect(outputs == offline, "record at offset \(record.source.offset): worker \(outputs), offline \(offline)")
        }
        // Nearly every record is decided without waiting: deliveries, launches, dead letters and
        // feedback records among them (only the extension's records wait).
        #expect(written * 10 > records.count * 9, "\(written) of \(records.count) written without waiting")
        #expect(launches > 20, "\(launches) launches")
        #expect(deadLetters > 50, "\(deadLetters) dead letters")
        #expect(feedback > 0, "\(feedback) feedback records")
    }

    @Test("a payload's style changes nothing a device sees: every output but a dead letter's raw value is the same", arguments: [Style.spaced, .pretty])
    func styleChangesNothing(_ style: Style) async throws {
        let configuration = try Configuration(yaml: Self.yaml)
        let dispatcher = try Fixture.dispatcher(Self.yaml)
        let topics = configuration.topics
        var compared = 0
        for record in try Self.records(topics: topics) {
            let compact = await dispatcher.decide(record, tables: Self.tables(), now: Self.now).outputs.map(Bytes.init)
            let styled = await dispatcher.decide(Self.restyled(record, style), tables: Self.tables(), now: Self.now).outputs.map(Bytes.init)
            guard let first = compact.first, let styledFirst = styled.first else {
                #expect(compact.count == styled.count)
                continue
            }
            if first.kind == .deadLetter || styledFirst.kind == .deadLetter {
                // A dead letter keeps the bytes as received; only a size limit may tell the styles
                // apart (whitespace counts against it, as it does at APNs).
                let sizes = (record.value?.count ?? 0, Self.restyled(record, style).value?.count ?? 0)
                if styledFirst.header("dlq-reason") != first.header("dlq-reason") {
                    #expect(styledFirst.header("dlq-reason") == "PayloadTooLarge" && sizes.1 > sizes.0, "offset \(record.source.offset)")
                }
                continue
            }
            // An extension's run takes its own time: its elapsedMs is the one field a run may change.
            #expect(
                compact.map(\.withoutElapsedTime) == styled.map(\.withoutElapsedTime),
                "record at offset \(record.source.offset) in \(style): compact \(compact), \(style) \(styled)")
            compared += 1
        }
        #expect(compared > 100, "\(compared) deliveries compared")
    }

    @Test("the delivered payload is the tree's compact form of the payload sent, escapes and repeated keys included", arguments: Style.allCases)
    func deliveredPayloadIsTheTreeForm(_ style: Style) async throws {
        let dispatcher = try Fixture.dispatcher(Self.yaml)
        let payloads = [
            #"{"aps":{"alert":"Esc \"quoted\" \u00e9 \/ \n \u000A \uD83D\uDE00","badge":1},"k":[1.50,-0,1e3]}"#,
            #"{"aps":{"alert":"first","alert":"last"},"x":{"a":1,"b":2,"a":3}}"#,
            #"{"\u0061ps":{"alert":"escaped key"},"aps":{"alert":"repeat of an escaped key"}}"#,
            #"{"aps":{"alert":{"title":"T","show-view":false}},"n":123456789012345678901234567890}"#,
        ]
        for (offset, payload) in payloads.enumerated() {
            let text = Self.restyled(Array(payload.utf8), style)
            let record = TestRecord(token: Self.tokens[0], headers: [("apns-topic", "com.example.app")], value: text, offset: Int64(offset)).requestRecord
            let result = await dispatcher.decide(record, tables: Self.tables(), now: Self.now)
            let delivered = try #require(result.outputs.first?.value)
            let value = try JSONValue(parsing: Array(delivered))
            let expected = try JSONValue(parsing: text).serialized()
            #expect(value.objectValue?["payload"].map { $0.serialized() } == expected, "\(payload) in \(style)")
            // The delivery's own bytes carry it as the tree writes it, not merely an equal value.
            #expect(String(decoding: Array(delivered), as: UTF8.self).contains(String(decoding: expected, as: UTF8.self)))
        }
    }

    /// Devices entries with every setting of SEMANTICS section 20 (and one without settings).
    static let settings = [
        #"{}"#, #"{"authorization":"provisional"}"#, #"{"authorization":"denied"}"#, #"{"authorization":"notDetermined"}"#,
        #"{"alerts":false}"#, #"{"sounds":false}"#, #"{"badges":false}"#, #"{"authorization":"provisional","alerts":false,"sounds":false}"#,
        #"{"alerts":false,"badges":false,"focus":"silencing"}"#,
    ]

    @Test("under every user's setting (section 20) the worker's outputs are the offline dispatch's")
    func workerAsOfflineUnderSettings() async throws {
        let configuration = try Configuration(yaml: Self.yaml)
        let dispatcher = try Fixture.dispatcher(Self.yaml)
        let topics = configuration.topics
        let records = Self.variants()
        var decided: [DeliveryReason: Int] = [:]
        for (index, entry) in Self.settings.enumerated() {
            let devices = DevicesTable()
            let appStates = AppStatesTable()
            for (position, token) in Self.tokens.enumerated() {
                devices.apply(key: RecordBytes(token), value: RecordBytes(entry))
                let state = ["notRunning", "background", "foreground", "forceQuit", "notRunning", "background"][(position + index) % 6]
                appStates.apply(key: RecordBytes(token), value: RecordBytes(#"{"state":"\#(state)"}"#))
            }
            let tables = StateTables(appStates: appStates, devices: devices)
            for record in records {
                guard let outputs = Self.written(record, by: dispatcher, tables: tables, topics: topics) else { continue }
                let offline = await dispatcher.decide(record, tables: tables, now: Self.now)
                if case .delivery(_, let reason) = offline.labels.outcome { decided[reason, default: 0] += 1 }
                #expect(outputs == offline.outputs.map(Bytes.init), "settings \(entry), record at offset \(record.source.offset)")
            }
        }
        // The new reasons are decided without waiting, as every gated delivery is.
        #expect(decided[.notAuthorized, default: 0] > 10, "\(decided)")
        #expect(decided[.alertsOff, default: 0] > 10, "\(decided)")
    }
}
