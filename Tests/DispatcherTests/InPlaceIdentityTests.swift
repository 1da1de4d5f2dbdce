import Dispatcher
import Foundation
import JSON
import Notifications
import Records
import TestSupport
import Testing

/// The in-place path (``Dispatcher/decideInPlace(_:tables:now:into:)``) must write what the owned
/// path (``Dispatcher/decide(_:tables:now:)``) writes for the same record: the same topic, kind,
/// key, headers (names, values, order) and value, byte for byte. Every record the in-place path
/// decides is checked against the owned path's outputs; the records it hands to the owned path
/// are counted, so that a change sending everything the owned way cannot pass unnoticed.
@Suite("In-place and owned paths write the same bytes")
struct InPlaceIdentityTests {
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

        init(_ record: OutputRecord) {
            topic = record.topic
            kind = record.kind
            key = record.key.map { Array($0) }
            headers = record.headers.map { (Array($0.name.utf8), $0.value.map { Array($0) }) }
            value = record.value.map { Array($0) }
        }

        init(_ output: inout InPlaceOutput, of view: borrowing RecordView, topics: TopicSettings) {
            topic =
                switch output.topic {
                case .deliveries: topics.deliveries
                case .launches: topics.launches
                case .deadLetter: topics.deadLetter
                }
            kind = output.kind
            (key, headers, value) = output.withLent(from: view) { key, value, headers in
                (
                    key.map { Array($0) },
                    headers.map { (Array($0.name), $0.value.map { Array($0) }) },
                    value.map { Array($0) }
                )
            }
        }
    }

    /// Apps for every kind of record: one without extensions, one whose category `EDIT` runs one
    /// (its mutable alerts go the owned way), a VoIP app.
    static let yaml = """
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

    static let tokens = (1...6).map { Fixture.token(UInt8($0 * 17)) }

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
                records.append(Fixture.record(token: tokens[(index + set) % tokens.count], headers: headers, value: Array(payload.utf8), offset: offset))
            }
        }
        // Keys APNs refuses, and one in capitals (folded to lowercase in the outputs).
        for (offset, token) in [nil, "abc", String(repeating: "zz", count: 32), tokens[0].uppercased()].enumerated() {
            records.append(Fixture.record(token: token, headers: [("apns-topic", "com.example.app")], value: Array(#"{"aps":{"alert":"k"}}"#.utf8), offset: Int64(20_000 + offset)))
        }
        return records
    }

    @Test("every record decided in place writes its outputs as the owned path writes them, headers included")
    func sameBytes() async throws {
        let configuration = try Configuration(yaml: Self.yaml)
        let dispatcher = try Fixture.dispatcher(Self.yaml)
        let topics = configuration.topics
        let appStates = AppStatesTable()
        for (index, token) in Self.tokens.enumerated() {
            let state = ["notRunning", "background", "foreground", "forceQuit", "notRunning", "background"][index]
            appStates.apply(key: RecordBytes(token), value: RecordBytes(#"{"state":"\#(state)"}"#))
        }
        let records = try Self.records(topics: topics)
        // A fixed time: both paths write `receivedAt` and `deliveredAt` from it.
        let now = Date(timeIntervalSince1970: 1_795_000_000.125)
        var output = InPlaceOutput()
        var decidedInPlace = 0
        var launches = 0
        var deadLetters = 0
        for record in records {
            let tables = StateTables(appStates: appStates)
            let inPlace = record.withView { view -> [Bytes]? in
                guard case .decided(let decided) = dispatcher.decideInPlace(view, tables: tables, now: now, into: &output) else {
                    return nil
                }
                var outputs = [Bytes(&output, of: view, topics: topics)]
                if let launch = decided.launch {
                    dispatcher.writeLaunchInPlace(view, launch, into: &output)
                    outputs.append(Bytes(&output, of: view, topics: topics))
                }
                return outputs
            }
            guard let inPlace else { continue }
            decidedInPlace += 1
            launches += inPlace.count - 1
            deadLetters += inPlace[0].kind == .deadLetter ? 1 : 0
            let owned = await dispatcher.decide(record, tables: tables, now: now).outputs.map(Bytes.init)
            #expect(
                inPlace == owned,
                "record at offset \(record.source.offset): in place \(inPlace), owned \(owned)")
        }
        // Most records are decided in place: deliveries, launches and dead letters among them.
        #expect(decidedInPlace * 2 > records.count, "\(decidedInPlace) of \(records.count) decided in place")
        #expect(launches > 20, "\(launches) launches")
        #expect(deadLetters > 50, "\(deadLetters) dead letters")
    }

    /// Devices entries with every setting of SEMANTICS section 20 (and one without settings).
    static let settings = [
        #"{}"#, #"{"authorization":"provisional"}"#, #"{"authorization":"denied"}"#, #"{"authorization":"notDetermined"}"#,
        #"{"alerts":false}"#, #"{"sounds":false}"#, #"{"badges":false}"#, #"{"authorization":"provisional","alerts":false,"sounds":false}"#,
        #"{"alerts":false,"badges":false,"focus":"silencing"}"#,
    ]

    @Test("under every user's setting (section 20) the worker's in-place path writes what dispatch's owned path writes")
    func sameBytesUnderSettings() async throws {
        let configuration = try Configuration(yaml: Self.yaml)
        let dispatcher = try Fixture.dispatcher(Self.yaml)
        let topics = configuration.topics
        let records = Self.variants()
        let now = Date(timeIntervalSince1970: 1_795_000_000.125)
        var output = InPlaceOutput()
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
                let inPlace = record.withView { view -> [Bytes]? in
                    guard case .decided(let result) = dispatcher.decideInPlace(view, tables: tables, now: now, into: &output) else { return nil }
                    var outputs = [Bytes(&output, of: view, topics: topics)]
                    if let launch = result.launch {
                        dispatcher.writeLaunchInPlace(view, launch, into: &output)
                        outputs.append(Bytes(&output, of: view, topics: topics))
                    }
                    if case .delivery(_, let reason) = result.labels.outcome { decided[reason, default: 0] += 1 }
                    return outputs
                }
                guard let inPlace else { continue }
                let owned = await dispatcher.decide(record, tables: tables, now: now).outputs.map(Bytes.init)
                #expect(inPlace == owned, "settings \(entry), record at offset \(record.source.offset): in place \(inPlace), owned \(owned)")
            }
        }
        // The new reasons are among those decided in place, not sent the owned way.
        #expect(decided[.notAuthorized, default: 0] > 10, "\(decided)")
        #expect(decided[.alertsOff, default: 0] > 10, "\(decided)")
    }
}
