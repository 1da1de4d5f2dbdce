import Dispatcher
import Foundation
import JSON
import Notifications
import Records
import Testing
import TestSupport

/// SEMANTICS section 10: which responses are refused, for which reason (the first failure wins),
/// and their dead letters.
@Suite("Actions and responses: validation (section 10)")
struct ResponseValidationTests {
    typealias Act = ResponseFixture.Act

    static let validValue = ResponseFixture.value(.action("LIKE"), payload: ResponseFixture.payload(category: "MESSAGE"))
    static let chat = [("apns-topic", ResponseFixture.bundleID)]

    /// A record and the reason it must be refused for.
    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        var token: String? = TestRecord.token()
        var headers: [(String, String)] = ResponseValidationTests.chat
        var value: [UInt8]? = ResponseValidationTests.validValue.serialized()
        let reason: RejectionReason
        /// A word the detail must contain (the field or value it names).
        let detail: String

        var testDescription: String { "\(reason.rawValue): \(name)" }

        init(
            _ name: String, token: String? = TestRecord.token(), headers: [(String, String)] = ResponseValidationTests.chat,
            value: [UInt8]? = ResponseValidationTests.validValue.serialized(), _ reason: RejectionReason, _ detail: String
        ) {
            self.name = name
            self.token = token
            self.headers = headers
            self.value = value
            self.reason = reason
            self.detail = detail
        }

        init(_ name: String, json: String, _ reason: RejectionReason, _ detail: String) {
            self.init(name, value: Array(json.utf8), reason, detail)
        }
    }

    static let n = #""notification":{"apnsId":"6f1c2a3e-0000-4000-8000-00000000000a","payload":{"aps":{"alert":"Hi","category":"MESSAGE"}}}"#

    static let refusals: [Refusal] = [
        // The request's checks, in the request's order.
        Refusal("no key", token: nil, .missingDeviceToken, "device token"),
        Refusal("not hexadecimal", token: "zz" + String(repeating: "a", count: 62), .badDeviceToken, "hexadecimal"),
        Refusal("a bad token wins over a missing topic", token: "abc", headers: [], .badDeviceToken, "abc"),
        Refusal("no apns-topic", headers: [("app-state", "foreground")], .missingTopic, "apns-topic"),
        Refusal("an empty apns-topic", headers: [("apns-topic", "")], .missingTopic, "apns-topic"),
        Refusal("a push-type suffix", headers: [("apns-topic", "com.example.chat.voip")], .badTopic, ".voip"),
        Refusal("an app not configured", headers: [("apns-topic", "com.example.other")], .topicDisallowed, "com.example.other"),
        Refusal(
            "a topic check wins over app-state", headers: [("apns-topic", "com.example.other"), ("app-state", "x")],
            .topicDisallowed, "com.example.other"),
        Refusal(
            "app-state", headers: [("apns-topic", ResponseFixture.bundleID), ("app-state", "asleep")], .badAppState,
            "asleep"),
        Refusal(
            "app-state wins over the value", headers: [("apns-topic", ResponseFixture.bundleID), ("app-state", "asleep")],
            value: Array("garbage".utf8), .badAppState, "asleep"),
        // The value's shape.
        Refusal("an empty value", value: nil, .invalidResponse, "empty"),
        Refusal("not JSON", json: "{notification", .invalidResponse, "not valid JSON"),
        Refusal("not an object", json: "[1]", .invalidResponse, "array"),
        Refusal("an unknown key", json: "{\(n),\"actionIdentifier\":\"LIKE\",\"userTxt\":\"hi\"}", .invalidResponse, "userTxt"),
        Refusal("no notification", json: #"{"actionIdentifier":"LIKE"}"#, .invalidResponse, "missing"),
        Refusal("a notification that is no object", json: #"{"notification":"x","actionIdentifier":"LIKE"}"#, .invalidResponse, "string"),
        Refusal(
            "an unknown notification key",
            json: #"{"notification":{"apnsId":"6f1c2a3e-0000-4000-8000-00000000000a","payload":{"aps":{}},"id":1},"actionIdentifier":"LIKE"}"#,
            .invalidResponse, "\"id\""),
        Refusal("no apnsId", json: #"{"notification":{"payload":{"aps":{}}},"actionIdentifier":"LIKE"}"#, .invalidResponse, "apnsId"),
        Refusal(
            "an apnsId that is no UUID", json: #"{"notification":{"apnsId":"n-1","payload":{"aps":{}}},"actionIdentifier":"LIKE"}"#,
            .invalidResponse, "n-1"),
        Refusal(
            "no payload", json: #"{"notification":{"apnsId":"6f1c2a3e-0000-4000-8000-00000000000a"},"actionIdentifier":"LIKE"}"#,
            .invalidResponse, "payload"),
        Refusal(
            "a payload breaking the type rules",
            json: #"{"notification":{"apnsId":"6f1c2a3e-0000-4000-8000-00000000000a","payload":{"aps":{"badge":"3"}}},"actionIdentifier":"LIKE"}"#,
            .invalidResponse, "aps.badge"),
        Refusal("both an action and a media command", json: "{\(n),\"actionIdentifier\":\"LIKE\",\"mediaCommand\":\"play\"}", .invalidResponse, "both"),
        Refusal("neither", json: "{\(n),\"userText\":\"hi\"}", .invalidResponse, "neither"),
        Refusal("an empty actionIdentifier", json: "{\(n),\"actionIdentifier\":\"\"}", .invalidResponse, "actionIdentifier"),
        Refusal("a number as actionIdentifier", json: "{\(n),\"actionIdentifier\":7}", .invalidResponse, "integer 7"),
        Refusal("a mediaCommand not play or pause", json: "{\(n),\"mediaCommand\":\"stop\"}", .invalidResponse, "stop"),
        Refusal("userText not a string", json: "{\(n),\"actionIdentifier\":\"REPLY\",\"userText\":5}", .invalidResponse, "userText"),
        Refusal("userText with a mediaCommand", json: "{\(n),\"mediaCommand\":\"play\",\"userText\":\"x\"}", .invalidResponse, "mediaCommand"),
        Refusal(
            "the shape wins over an unknown action", json: "{\(n),\"actionIdentifier\":\"NOPE\",\"extra\":1}",
            .invalidResponse, "extra"),
        // Unknown actions.
        Refusal("an action the category does not declare", json: "{\(n),\"actionIdentifier\":\"NOPE\"}", .unknownAction, "NOPE"),
        Refusal(
            "an action of another category",
            json: #"{"notification":{"apnsId":"6f1c2a3e-0000-4000-8000-00000000000a","payload":{"aps":{"alert":"Hi","category":"PLAIN"}}},"actionIdentifier":"LIKE"}"#,
            .unknownAction, "PLAIN"),
        Refusal(
            "a custom action of a notification without category",
            json: #"{"notification":{"apnsId":"6f1c2a3e-0000-4000-8000-00000000000a","payload":{"aps":{"alert":"Hi"}}},"actionIdentifier":"LIKE"}"#,
            .unknownAction, "category"),
        Refusal("userText on an action without text input", json: "{\(n),\"actionIdentifier\":\"LIKE\",\"userText\":\"x\"}", .unknownAction, "LIKE"),
        Refusal(
            "userText on the default action",
            json: "{\(n),\"actionIdentifier\":\"com.apple.UNNotificationDefaultActionIdentifier\",\"userText\":\"x\"}",
            .unknownAction, "default action"),
        Refusal("a media command without a media button", json: "{\(n),\"mediaCommand\":\"play\"}", .unknownAction, "media button"),
        Refusal(
            "a media command for a category no content extension presents",
            json: #"{"notification":{"apnsId":"6f1c2a3e-0000-4000-8000-00000000000a","payload":{"aps":{"alert":"Hi","category":"PLAIN"}}},"mediaCommand":"pause"}"#,
            .unknownAction, "PLAIN"),
    ]

    @Test("refusals", arguments: refusals)
    func refusal(_ refusal: Refusal) throws {
        let dispatcher = try Dispatcher(configuration: Configuration(yaml: ResponseFixture.yaml()), registry: ExtensionRegistry())
        let record = TestRecord(token: refusal.token, headers: refusal.headers, value: refusal.value, topic: TestRecord.responsesTopic).requestRecord
        let result = dispatcher.respond(record, appStates: NoAppStates(), receivedAt: Date())
        #expect(result.rejectionReason == refusal.reason)
        #expect(result.outputs.map(\.kind) == [.deadLetter])
        #expect(result.header("dlq-reason") == refusal.reason.rawValue)
        #expect(result.header("dlq-status") == "400")
        let detail = result.header("dlq-detail") ?? ""
        #expect(detail.contains(refusal.detail), "detail: \(detail)")
    }

    /// Responses the legacy profile refuses: only the default action exists there.
    static let legacyRefusals: [(String, Act, String?, JSONObject)] = [
        ("a custom action", .action("LIKE"), "MESSAGE", [:]),
        ("a dismissal", .action("dismiss"), "MESSAGE", [:]),
        ("a media command", .media("play"), "VIDEO", [:]),
        ("the default action on an alert without View button (show-view false)", .action("default"), "MESSAGE", ["show-view": false]),
    ]

    @Test("the legacy profile refuses all but the default action of an alert with a View button")
    func legacyProfile() throws {
        let yaml = ResponseFixture.yaml(profile: .legacy)
        for (name, act, category, alert) in Self.legacyRefusals {
            let result = try ResponseFixture.respond(act, category: category, alert: alert, yaml: yaml)
            #expect(result.rejectionReason == .unknownAction, "\(name)")
        }
        let shown = try ResponseFixture.respond(.action("default"), category: "MESSAGE", alert: ["show-view": true], yaml: yaml)
        #expect(shown.handledResponse != nil)
        // The modern profile ignores the legacy key.
        let modern = try ResponseFixture.respond(.action("default"), category: "MESSAGE", alert: ["show-view": false])
        #expect(modern.handledResponse?.handling.opensApp == true)
    }

    @Test("with no apps configured every app is allowed, but no custom action is declared")
    func noApps() throws {
        let yaml = "dispatch: {profile: modern}"
        #expect(try ResponseFixture.respond(.action("default"), category: "X", yaml: yaml).handledResponse?.handling.appCallback == .userNotificationCenter)
        #expect(try ResponseFixture.respond(.action("dismiss"), category: "X", yaml: yaml).handledResponse?.handling.reason == .dismissNotReported)
        #expect(try ResponseFixture.respond(.action("LIKE"), category: "X", yaml: yaml).rejectionReason == .unknownAction)
    }

    @Test("a dead letter keeps the record and names its source on the responses topic")
    func deadLetterRecord() throws {
        let dispatcher = try Dispatcher(configuration: Configuration(yaml: ResponseFixture.yaml()), registry: ExtensionRegistry())
        let value = Array(#"{"actionIdentifier":"LIKE"}"#.utf8)
        let record = TestRecord(
            headers: [("apns-topic", ResponseFixture.bundleID), ("traceparent", "00-1-2-01")], value: value,
            topic: TestRecord.responsesTopic, offset: 42
        ).requestRecord
        let result = dispatcher.respond(record, appStates: NoAppStates(), receivedAt: Date())
        let output = try #require(result.outputs.first)
        #expect(output.topic == "notifications.dead-letter")
        #expect(output.key == RecordBytes(TestRecord.token()))
        #expect(output.value == RecordBytes(value))
        #expect(Array(output.headers.prefix(2)) == record.headers)
        let source = TopicPartitionOffset(topic: "notifications.responses", partition: 0, offset: 42)
        #expect(result.header("apns-id") == MessageID.derived(for: source).description)
        #expect(result.header("dlq-source-topic") == "notifications.responses")
        #expect(result.header("dlq-source-offset") == "42")
        #expect(result.header("dlq-consumer-group") == "notification-dispatcher")
    }
}
