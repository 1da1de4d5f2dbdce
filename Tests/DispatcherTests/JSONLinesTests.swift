import Dispatcher
import DispatcherTools
import Foundation
import JSON
import Notifications
import Records
import Synchronization
import Testing
import TestSupport

/// The JSON-lines record format (docs/rules.md, "Offline") and the offline dispatch loop.
@Suite("JSON lines")
struct JSONLinesTests {
    private let source = TopicPartitionOffset(topic: "notifications.requests", partition: 0, offset: 7)

    private func decode(_ line: String) throws(JSONLineError) -> RequestRecord {
        try JSONLines.decodeRequest(Array(line.utf8), source: source)
    }

    @Test("value is any JSON, serialised compactly with numbers as written and / unescaped")
    func compactValue() throws {
        let record = try decode(#"{"key": "ab", "value": { "aps" : {"alert": "a/b é", "n": 1.50 } } }"#)
        #expect(record.value == RecordBytes(#"{"aps":{"alert":"a/b é","n":1.50}}"#))
        #expect(record.key == RecordBytes("ab"))
        #expect(record.source == source)
    }

    @Test("rawValue gives the exact bytes; value null is the bytes null; neither is an empty value")
    func rawAndNullAndEmpty() throws {
        #expect(try decode(#"{"rawValue": "{ \"aps\": 1 }"}"#).value == RecordBytes(#"{ "aps": 1 }"#))
        #expect(try decode(#"{"value": null}"#).value == RecordBytes("null"))
        #expect(try decode(#"{"key": "k"}"#).value == [])
        #expect(try decode(#"{"topic": "t", "key": null}"#).key == nil)
    }

    @Test("a line's topic is read (nil when absent or null) for the dispatcher to tell responses from requests")
    func topic() throws {
        #expect(try JSONLines.decode(Array(#"{"topic": "notifications.responses", "key": "k"}"#.utf8), source: source).topic == "notifications.responses")
        #expect(try JSONLines.decode(Array(#"{"key": "k"}"#.utf8), source: source).topic == nil)
        #expect(try JSONLines.decode(Array(#"{"topic": null}"#.utf8), source: source).topic == nil)
        #expect(throws: JSONLineError.self) { try JSONLines.decode(Array(#"{"topic": 3}"#.utf8), source: source) }
    }

    @Test("an action record is written with its value, like a delivery")
    func encodeAction() {
        let record = OutputRecord(
            kind: .action, topic: "notifications.actions", key: Array("k".utf8),
            headers: [RecordHeader(name: "apns-id", value: "i")], value: Array(#"{"handledBy":"app"}"#.utf8))
        #expect(
            String(decoding: JSONLines.encode(record), as: UTF8.self)
                == #"{"topic":"notifications.actions","key":"k","headers":{"apns-id":"i"},"value":{"handledBy":"app"}}"#)
    }

    @Test("headers are strings, numbers are taken as their JSON text; every header is kept in order, repeats included (SEMANTICS section 1)")
    func headers() throws {
        let record = try decode(#"{"headers": {"apns-priority": 5, "apns-expiration": 1.0e3, "APNS-TOPIC": "a", "apns-topic": "b", "apns-topic": "c"}}"#)
        #expect(
            record.headers == [
                RecordHeader(name: "apns-priority", value: "5"), RecordHeader(name: "apns-expiration", value: "1.0e3"),
                RecordHeader(name: "APNS-TOPIC", value: "a"), RecordHeader(name: "apns-topic", value: "b"),
                RecordHeader(name: "apns-topic", value: "c"),
            ])
    }

    @Test("headers may be a list of [name, value] pairs; anything else is an invalid line")
    func headerPairs() throws {
        let record = try decode(#"{"headers": [["apns-topic", "a"], ["x", 5], ["apns-topic", "b"]]}"#)
        #expect(
            record.headers == [
                RecordHeader(name: "apns-topic", value: "a"), RecordHeader(name: "x", value: "5"), RecordHeader(name: "apns-topic", value: "b"),
            ])
        for bad in [#"{"headers": [["a"]]}"#, #"{"headers": [[1, "a"]]}"#, #"{"headers": [["a", null]]}"#, #"{"headers": "a"}"#] {
            #expect(throws: JSONLineError.self, "\(bad)") { try decode(bad) }
        }
    }

    @Test("timestamp: an integer of milliseconds from 0 to the end of year 9999 becomes the record's timestamp")
    func timestamp() throws {
        #expect(try decode(#"{"timestamp": 1800000000250}"#).timestamp == Date(timeIntervalSince1970: 1_800_000_000.25))
        #expect(try decode(#"{"timestamp": null}"#).timestamp == nil)
        for bad in ["-1", "1.0", "1e3", #""1""#, "253402300800000"] {
            #expect(throws: JSONLineError.self, "\(bad)") { try decode(#"{"timestamp": \#(bad)}"#) }
        }
    }

    @Test("an output record's repeated header is written as a repeated key, in order")
    func encodeRepeatedHeaders() {
        let record = OutputRecord(
            kind: .deadLetter, topic: "t", key: nil,
            headers: [RecordHeader(name: "apns-id", value: "1"), RecordHeader(name: "APNS-ID", value: "2"), RecordHeader(name: "x", value: nil)],
            value: [])
        #expect(
            String(decoding: JSONLines.encode(record), as: UTF8.self)
                == #"{"topic":"t","key":null,"headers":{"apns-id":"1","APNS-ID":"2","x":null},"rawValue":""}"#)
    }

    @Test(
        "lines that are not request records are refused",
        arguments: [
            "not json", "[1]", #"{"headers": {"a": true}}"#, #"{"headers": {"a": null}}"#, #"{"headers": {"a": [1]}}"#,
            #"{"headers": {"a": {}}}"#, #"{"headers": "x"}"#, #"{"key": 5}"#, #"{"rawValue": 5}"#,
            #"{"value": 1, "rawValue": "1"}"#, #"{"topic": 3}"#, #"{"valu": {}}"#,
        ])
    func invalidLines(line: String) {
        #expect(throws: JSONLineError.self) { try decode(line) }
    }

    @Test("a value nested too deep for a payload is still a record (its dead letter says InvalidPayload)")
    func deepValue() async throws {
        let depth = JSONValue.maximumDepth + 10
        let value = #"{"aps":"# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
        let record = try decode(#"{"key": "\#(TestRecord.token())", "headers": {"apns-topic": "com.example.app"}, "value": \#(value)}"#)
        let result = try await Fixture.dispatcher("").dispatch(record, appStates: NoAppStates(), receivedAt: Date())
        #expect(result.rejectionReason == .invalidPayload)
    }

    @Test("blank lines are only whitespace")
    func blank() {
        #expect(JSONLines.isBlank(Array("  \t\r".utf8)))
        #expect(JSONLines.isBlank([]))
        #expect(!JSONLines.isBlank(Array(" {}".utf8)))
    }

    @Test("lines split at newlines; a final newline ends the last line; CRLF is accepted")
    func splitting() {
        #expect(JSONLinesDispatch.lines(of: Array("a\nb\n".utf8)) == [Array("a".utf8), Array("b".utf8)])
        #expect(JSONLinesDispatch.lines(of: Array("a\r\n\nb".utf8)) == [Array("a".utf8), [], Array("b".utf8)])
        #expect(JSONLinesDispatch.lines(of: []) == [])
    }

    @Test("output lines: value for deliveries and launches, rawValue with the original bytes for dead letters")
    func encode() {
        let delivery = OutputRecord(
            kind: .delivery, topic: "d", key: Array("ab".utf8), headers: [RecordHeader(name: "apns-id", value: "x")],
            value: Array(#"{"a":1.0}"#.utf8))
        #expect(
            String(decoding: JSONLines.encode(delivery), as: UTF8.self)
                == #"{"topic":"d","key":"ab","headers":{"apns-id":"x"},"value":{"a":1.0}}"#)
        let deadLetter = OutputRecord(
            kind: .deadLetter, topic: "x", key: nil, headers: [], value: Array(#"{"aps": "é"}"#.utf8))
        #expect(
            String(decoding: JSONLines.encode(deadLetter), as: UTF8.self)
                == #"{"topic":"x","key":null,"headers":{},"rawValue":"{\"aps\": \"é\"}"}"#)
    }

    @Test("the offline loop keeps input order while a slow line runs, counts blank lines and reports invalid ones")
    func offlineOrder() async throws {
        let gate = Gate()
        let yaml = """
            dispatch: {deadline: 30s}
            apps:
              com.example.app:
                categories:
                  SLOW: {serviceExtension: {kind: gated}}
            """
        let dispatcher = try Fixture.dispatcher(
            yaml,
            kinds: [
                "gated": { request in
                    await gate.wait()
                    return request.content
                }
            ])
        let slowToken = TestRecord.token(0x01)
        let fastToken = TestRecord.token(0x02)
        let lines = [
            #"{"key": "\#(slowToken)", "headers": {"apns-topic": "com.example.app"}, "value": {"aps": {"alert": "slow", "mutable-content": 1, "category": "SLOW"}}}"#,
            "",
            "garbage",
            #"{"key": "\#(fastToken)", "headers": {"apns-topic": "com.example.app"}, "value": {"aps": {"alert": "fast"}}}"#,
        ].map { Array($0.utf8) }
        let emitted = Emitted()
        // The slow line can only finish once the fast line is being dispatched: the loop must not
        // wait for one line before starting the next.
        let offline = JSONLinesDispatch(
            dispatcher: dispatcher, appStates: GateOpeningLookup(gate: gate, token: fastToken), maxConcurrent: 10)
        let invalid = await offline.run(lines: lines) { offset, result in
            let summary: String
            switch result {
            case .blank: summary = "blank"
            case .invalid: summary = "invalid"
            case .dispatched(let dispatched): summary = dispatched.reason?.rawValue ?? "dead letter"
            case .tableUpdated: summary = "table"
            }
            emitted.append(offset, summary)
        }
        #expect(invalid == 1)
        let order = emitted.lines
        #expect(order.map(\.0) == [0, 1, 2, 3])
        #expect(order.map(\.1) == ["extension-unchanged", "blank", "invalid", "not-mutable"])
    }

    @Test("offline sources: the configured requests topic, partition 0, offset = line number from 0")
    func offlineSource() async throws {
        let dispatcher = try Fixture.dispatcher("topics: {requests: in.requests}")
        let offline = JSONLinesDispatch(dispatcher: dispatcher)
        #expect(offline.source(ofLine: 5) == TopicPartitionOffset(topic: "in.requests", partition: 0, offset: 5))
        let result = await offline.process(Array(#"{"headers": {"apns-topic": "a"}, "value": {"aps": {}}}"#.utf8), offset: 4)
        guard case .dispatched(let dispatched) = result else {
            Issue.record("expected a dispatch result")
            return
        }
        #expect(dispatched.header("dlq-source-offset") == "4")
        #expect(dispatched.header("dlq-source-topic") == "in.requests")
        #expect(
            dispatched.header("apns-id")
                == MessageID.derived(for: TopicPartitionOffset(topic: "in.requests", partition: 0, offset: 4)).description)
    }
}

/// An app-states table that opens `gate` when asked about `token`.
struct GateOpeningLookup: AppStateLookup {
    let gate: Gate
    let token: String

    func appState(forDeviceToken deviceToken: String) -> AppState? {
        if deviceToken == token { gate.open() }
        return nil
    }
}

/// Lines emitted by the offline loop, collected from its tasks.
final class Emitted: Sendable {
    private let state = Mutex<[(Int, String)]>([])

    /// What was emitted, in order.
    var lines: [(Int, String)] { state.withLock { $0 } }

    /// Records one emitted line.
    func append(_ offset: Int, _ summary: String) {
        state.withLock { $0.append((offset, summary)) }
    }
}
