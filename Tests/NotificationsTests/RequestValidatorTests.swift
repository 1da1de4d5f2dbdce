import Foundation
import Notifications
import Records
import Testing
import TestSupport

/// One rule of SEMANTICS.md section 1: a record that passes, one that fails, and what the failure must say.
struct RuleCase: CustomTestStringConvertible, Sendable {
    let name: String
    let passing: TestRecord
    let failing: TestRecord
    let reason: RejectionReason
    /// Words the detail must contain: the field and the offending value.
    let mentions: [String]
    var validator = RequestValidator()

    var testDescription: String { name }
}


@Suite("Request rules of SEMANTICS.md section 1")
struct RequestValidatorTests {
    static let base = TestRecord.forValidator()

    static let rules: [RuleCase] = [
        RuleCase(name: "key missing", passing: base, failing: base.key(nil), reason: .missingDeviceToken, mentions: ["device token"]),
        RuleCase(name: "key empty", passing: base, failing: base.key(""), reason: .missingDeviceToken, mentions: ["device token"]),
        RuleCase(name: "key too short", passing: base.key(String(repeating: "a", count: 64)), failing: base.key(String(repeating: "a", count: 62)),
                 reason: .badDeviceToken, mentions: ["device token", "aaaa", "62"]),
        RuleCase(name: "key too long", passing: base.key(String(repeating: "a", count: 200)), failing: base.key(String(repeating: "a", count: 202)),
                 reason: .badDeviceToken, mentions: ["device token", "202", "…"]),
        RuleCase(name: "key odd length", passing: base.key(String(repeating: "f", count: 66)), failing: base.key(String(repeating: "f", count: 65)),
                 reason: .badDeviceToken, mentions: ["device token", "65"]),
        RuleCase(name: "key not hex", passing: base, failing: base.key(String(repeating: "g", count: 64)),
                 reason: .badDeviceToken, mentions: ["device token", "gggg", "hexadecimal"]),
        RuleCase(name: "topic missing", passing: base, failing: base.header("apns-topic", nil), reason: .missingTopic, mentions: ["apns-topic"]),
        RuleCase(name: "topic empty", passing: base, failing: base.header("apns-topic", ""), reason: .missingTopic, mentions: ["apns-topic"]),
        RuleCase(name: "push type unknown", passing: base.header("apns-push-type", "alert"), failing: base.header("apns-push-type", "Alert"),
                 reason: .invalidPushType, mentions: ["apns-push-type", "\"Alert\""]),
        RuleCase(name: "push type empty", passing: base.header("apns-push-type", "alert"), failing: base.header("apns-push-type", ""),
                 reason: .invalidPushType, mentions: ["apns-push-type", "\"\""]),
        RuleCase(name: "apns-id malformed", passing: base.header("apns-id", "123E4567-E89B-12D3-A456-426614174000"),
                 failing: base.header("apns-id", "123e4567e89b12d3a456426614174000"), reason: .badMessageId, mentions: ["apns-id", "123e4567e89b"]),
        RuleCase(name: "apns-id bad digit", passing: base.header("apns-id", "00000000-0000-0000-0000-000000000000"),
                 failing: base.header("apns-id", "00000000-0000-0000-0000-00000000000g"), reason: .badMessageId, mentions: ["apns-id", "00000000000g"]),
        RuleCase(name: "priority value", passing: base.header("apns-priority", "1"), failing: base.header("apns-priority", "7"),
                 reason: .badPriority, mentions: ["apns-priority", "\"7\""]),
        RuleCase(name: "priority spelling", passing: base.header("apns-priority", "10"), failing: base.header("apns-priority", "010"),
                 reason: .badPriority, mentions: ["apns-priority", "\"010\""]),
        RuleCase(name: "expiration negative", passing: base.header("apns-expiration", "0"), failing: base.header("apns-expiration", "-1"),
                 reason: .badExpirationDate, mentions: ["apns-expiration", "\"-1\""]),
        RuleCase(name: "expiration not a number", passing: base.header("apns-expiration", "1700000000"), failing: base.header("apns-expiration", "tomorrow"),
                 reason: .badExpirationDate, mentions: ["apns-expiration", "tomorrow"]),
        RuleCase(name: "expiration overflow", passing: base.header("apns-expiration", "9223372036854775807"),
                 failing: base.header("apns-expiration", "9223372036854775808"), reason: .badExpirationDate, mentions: ["apns-expiration", "9223372036854775808"]),
        RuleCase(name: "collapse id too long", passing: base.header("apns-collapse-id", String(repeating: "c", count: 64)),
                 failing: base.header("apns-collapse-id", String(repeating: "c", count: 65)), reason: .badCollapseId, mentions: ["apns-collapse-id", "65"]),
        RuleCase(name: "collapse id counts bytes", passing: base.header("apns-collapse-id", String(repeating: "é", count: 32)),
                 failing: base.header("apns-collapse-id", String(repeating: "é", count: 33)), reason: .badCollapseId, mentions: ["apns-collapse-id", "66"]),
        RuleCase(name: "app state", passing: base.header("app-state", "forceQuit"), failing: base.header("app-state", "forcequit"),
                 reason: .badAppState, mentions: ["app-state", "\"forcequit\""]),
        RuleCase(name: "payload missing", passing: base, failing: base.payload(nil), reason: .payloadEmpty, mentions: ["payload"]),
        RuleCase(name: "payload empty", passing: base, failing: base.payload(""), reason: .payloadEmpty, mentions: ["payload"]),
        RuleCase(name: "payload too large (alert)", passing: base.payload(payloadOfSize(4096)), failing: base.payload(payloadOfSize(4097)),
                 reason: .payloadTooLarge, mentions: ["payload", "4097", "4096"]),
        RuleCase(name: "payload too large (voip)", passing: base.header("apns-topic", "com.example.app.voip").header("apns-push-type", "voip").payload(payloadOfSize(5120)),
                 failing: base.header("apns-topic", "com.example.app.voip").header("apns-push-type", "voip").payload(payloadOfSize(5121)),
                 reason: .payloadTooLarge, mentions: ["payload", "5121", "5120", "voip"]),
        RuleCase(name: "payload too large (legacy)", passing: base.payload(payloadOfSize(256)), failing: base.payload(payloadOfSize(257)),
                 reason: .payloadTooLarge, mentions: ["payload", "257", "256", "legacy"], validator: RequestValidator(profile: .legacy)),
        RuleCase(name: "payload not JSON", passing: base, failing: base.payload(#"{"aps":{"#), reason: .invalidPayload, mentions: ["payload", "JSON"]),
        RuleCase(name: "payload trailing data", passing: base, failing: base.payload(#"{"aps":{}} x"#), reason: .invalidPayload, mentions: ["payload", "after"]),
        RuleCase(name: "payload not an object", passing: base, failing: base.payload("[1]"), reason: .invalidPayload, mentions: ["payload", "array", "[1]"]),
        RuleCase(name: "aps missing", passing: base, failing: base.payload(#"{"apps":{}}"#), reason: .invalidPayload, mentions: ["aps"]),
        RuleCase(name: "aps not an object", passing: base, failing: base.payload(#"{"aps":"alert"}"#), reason: .invalidPayload, mentions: ["aps", "\"alert\""]),
        RuleCase(name: "background with priority 10", passing: base.header("apns-push-type", "background").payload(#"{"aps":{"content-available":1}}"#),
                 failing: base.header("apns-push-type", "background").header("apns-priority", "10").payload(#"{"aps":{"content-available":1}}"#),
                 reason: .badPriority, mentions: ["apns-priority", "10", "background"]),
        RuleCase(name: "inferred background with priority 10", passing: base.header("apns-priority", "5").payload(#"{"aps":{"content-available":1}}"#),
                 failing: base.header("apns-priority", "10").payload(#"{"aps":{"content-available":1}}"#),
                 reason: .badPriority, mentions: ["apns-priority", "background", "inferred"]),
        RuleCase(name: "topic lacks its suffix", passing: base.header("apns-push-type", "voip").header("apns-topic", "com.example.app.voip"),
                 failing: base.header("apns-push-type", "voip"), reason: .badTopic, mentions: ["apns-topic", "com.example.app", ".voip"]),
        RuleCase(name: "topic has another suffix", passing: base.header("apns-topic", "com.example.app"),
                 failing: base.header("apns-topic", "com.example.app.voip"), reason: .badTopic, mentions: ["apns-topic", "com.example.app.voip", "voip"]),
        RuleCase(name: "topic is only a suffix", passing: base.header("apns-push-type", "widgets").header("apns-topic", "a.push-type.widgets"),
                 failing: base.header("apns-push-type", "widgets").header("apns-topic", ".push-type.widgets"), reason: .badTopic, mentions: ["apns-topic", ".push-type.widgets"]),
        RuleCase(name: "topic suffix is case-sensitive", passing: base.header("apns-push-type", "complication").header("apns-topic", "com.x.complication"),
                 failing: base.header("apns-push-type", "complication").header("apns-topic", "com.x.Complication"), reason: .badTopic, mentions: ["apns-topic", "com.x.Complication"]),
        RuleCase(name: "topic disallowed", passing: base.header("apns-topic", "com.example.app"), failing: base.header("apns-topic", "com.other.app"),
                 reason: .topicDisallowed, mentions: ["apns-topic", "com.other.app"], validator: RequestValidator(allowedBundleIDs: ["com.example.app"])),
        RuleCase(name: "topic disallowed after its suffix is removed", passing: base.header("apns-push-type", "voip").header("apns-topic", "com.example.app.voip"),
                 failing: base.header("apns-push-type", "voip").header("apns-topic", "com.other.app.voip"),
                 reason: .topicDisallowed, mentions: ["com.other.app"], validator: RequestValidator(allowedBundleIDs: ["com.example.app"])),
    ]

    @Test("rule", arguments: rules)
    func rule(_ rule: RuleCase) throws {
        let accepted = rule.passing.validate(rule.validator)
        if case .failure(let rejection) = accepted { Issue.record("passing example rejected: \(rejection)") }
        let rejection = try #require(rule.failing.rejection(rule.validator))
        #expect(rejection.reason == rule.reason)
        #expect(rejection.status == (rule.reason == .payloadTooLarge ? 413 : 400))
        for word in rule.mentions {
            #expect(rejection.detail.contains(word), "detail \(rejection.detail) should mention \(word)")
        }
        #expect(rejection.detail.hasSuffix("."))
    }

    /// Each pair breaks two rules; the one earlier in the order of section 1 must be the reason.
    static let orderCases: [(String, TestRecord, RejectionReason)] = [
        ("token before topic", base.key("zz").header("apns-topic", nil), .badDeviceToken),
        ("topic before header formats", base.header("apns-topic", nil).header("apns-push-type", "nope"), .missingTopic),
        ("push type before apns-id", base.header("apns-push-type", "nope").header("apns-id", "x"), .invalidPushType),
        ("apns-id before priority", base.header("apns-id", "x").header("apns-priority", "2"), .badMessageId),
        ("priority before expiration", base.header("apns-priority", "2").header("apns-expiration", "x"), .badPriority),
        ("expiration before collapse id", base.header("apns-expiration", "x").header("apns-collapse-id", String(repeating: "c", count: 65)), .badExpirationDate),
        ("collapse id before app state", base.header("apns-collapse-id", String(repeating: "c", count: 65)).header("app-state", "x"), .badCollapseId),
        ("app state before payload", base.header("app-state", "x").payload(nil), .badAppState),
        ("empty before anything else about the payload", base.payload("").header("apns-topic", "x.voip"), .payloadEmpty),
        ("too large before invalid", base.payload(String(repeating: "[", count: 5000)), .payloadTooLarge),
        ("invalid payload before background priority", base.header("apns-push-type", "background").header("apns-priority", "10").payload("{}"), .invalidPayload),
        ("background priority before topic", base.header("apns-push-type", "background").header("apns-priority", "10").header("apns-topic", "x.voip"), .badPriority),
        ("bad topic before disallowed", base.header("apns-topic", "com.other.app.voip"), .badTopic),
        ("header format before payload size", base.header("apns-collapse-id", String(repeating: "c", count: 65)).payload(payloadOfSize(9000)), .badCollapseId),
    ]

    /// Where `deviceTokenBytes` puts the byte under test: (key length, position). The checks run
    /// eight bytes at a time and then byte by byte, so inside a word, at a word's edges, and in the
    /// tail of a key whose length is not a multiple of eight.
    static let tokenPositions = [(64, 0), (64, 30), (64, 63), (66, 7), (66, 64), (66, 65)]

    @Test("a device token is hexadecimal: every other byte value is refused, and A-F are lowercased", arguments: tokenPositions)
    func deviceTokenBytes(length: Int, position: Int) throws {
        for byte in UInt8.min...UInt8.max {
            var key = Array("0123456789abcdefABCDEF".utf8) + Array(repeating: UInt8(ascii: "E"), count: length - 22)
            key[position] = byte
            let record = TestRecord.forValidator().requestRecord
            let result = RequestValidator().validate(RequestRecord(key: RecordBytes(key), headers: record.headers, value: record.value, source: record.source))
            let isHex = (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
            switch result {
            case .success(let request):
                #expect(isHex, "byte \(byte) accepted")
                let lowered = key.map { (0x41...0x46).contains($0) ? $0 + 0x20 : $0 }
                #expect(request.deviceToken == String(decoding: lowered, as: UTF8.self))
            case .failure(let rejection):
                #expect(!isHex, "byte \(byte) refused")
                #expect(rejection.reason == .badDeviceToken)
            }
        }
    }

    @Test("first failure wins", arguments: orderCases)
    func order(_ name: String, _ fixture: TestRecord, _ reason: RejectionReason) throws {
        let rejection = try #require(fixture.rejection(RequestValidator(allowedBundleIDs: ["com.example.app"])))
        #expect(rejection.reason == reason, "\(name): \(rejection)")
    }

    @Test("the given push type's limit applies before the type is known from the payload")
    func sizeLimitUsesGivenPushType() {
        let voip = TestRecord.forValidator().header("apns-topic", "a.voip").header("apns-push-type", "voip").payload(payloadOfSize(5000))
        #expect(voip.rejection() == nil)
        let inferred = TestRecord.forValidator().payload(payloadOfSize(5000))
        #expect(inferred.rejection()?.reason == .payloadTooLarge)
    }

    static let inference: [(String, PushType, Priority)] = [
        (#"{"aps":{"alert":"a"}}"#, .alert, .immediate),
        (#"{"aps":{"badge":3,"content-available":1}}"#, .alert, .immediate),
        (#"{"aps":{"sound":"default","content-available":1}}"#, .alert, .immediate),
        (#"{"aps":{"alert":"","content-available":1}}"#, .alert, .immediate),
        (#"{"aps":{"content-available":1}}"#, .background, .conserve),
        (#"{"aps":{"content-available":0}}"#, .alert, .immediate),
        (#"{"aps":{}}"#, .alert, .immediate),
        (#"{"aps":{"category":"c"},"content-available":1}"#, .alert, .immediate),
    ]

    @Test("push type inferred when absent, priority defaulted", arguments: inference)
    func inferred(_ payload: String, _ pushType: PushType, _ priority: Priority) throws {
        let request = try TestRecord.forValidator().payload(payload).validate().get()
        #expect(request.pushType == pushType)
        #expect(!request.pushTypeWasGiven)
        #expect(request.priority == priority)
    }

    @Test("given push type background defaults to priority 5; others to 10", arguments: PushType.allCases)
    func priorityDefault(_ pushType: PushType) throws {
        let topic = "com.example.app" + (pushType.topicSuffix ?? "")
        // An mdm payload carries mdm (section 2).
        let payload = pushType == .mdm ? #"{"mdm":"magic"}"# : #"{"aps":{"alert":"Hello"}}"#
        let request = try TestRecord.forValidator().header("apns-push-type", pushType.rawValue).header("apns-topic", topic).payload(payload).validate().get()
        #expect(request.pushType == pushType)
        #expect(request.pushTypeWasGiven)
        #expect(request.priority == (pushType == .background ? .conserve : .immediate))
        #expect(request.bundleID == (pushType == .mdm ? topic : "com.example.app"))
    }

    @Test("mdm: the topic is the identifier; not checked against apps")
    func mdm() throws {
        let validator = RequestValidator(allowedBundleIDs: ["com.example.app"])
        let mdm = TestRecord.forValidator().header("apns-push-type", "mdm").payload(#"{"mdm":"magic"}"#)
        let request = try mdm.header("apns-topic", "com.apple.mgmt.External.1234").validate(validator).get()
        #expect(request.bundleID == "com.apple.mgmt.External.1234")
        let suffixed = mdm.header("apns-topic", "com.apple.mgmt.voip").rejection(validator)
        #expect(suffixed?.reason == .badTopic)
    }

    @Test("every suffix rejected for every other push type")
    func suffixMatrix() {
        for pushType in PushType.allCases {
            for other in PushType.allCases where other != pushType {
                guard let suffix = other.topicSuffix else { continue }
                let fixture = TestRecord.forValidator().header("apns-push-type", pushType.rawValue).header("apns-topic", "com.example.app" + suffix)
                    .payload(#"{"mdm":"magic","aps":{"alert":"Hello"}}"#)
                #expect(fixture.rejection()?.reason == .badTopic, "\(pushType) with topic suffix \(suffix)")
            }
        }
    }

    @Test("header names match without regard to case; of repeated names that are not apns-*, the last wins")
    func headerNames() throws {
        let fixture = TestRecord.forValidator(headers: [
            ("APNS-TOPIC", "com.example.app"), ("apns-priority", "5"), ("APNS-ID", "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE"),
            ("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), ("app-state", "foreground"),
            ("TraceParent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"), ("Apns-Collapse-Id", ""), ("Apns-Expiration", "0"), ("App-State", "background"),
        ])
        let request = try fixture.validate().get()
        #expect(request.priority == .conserve)
        #expect(request.apnsID.description == "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
        #expect(request.apnsIDWasGiven)
        #expect(request.traceparent == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        #expect(request.collapseID == nil)
        #expect(request.expiration == nil)
        #expect(request.appStateOverride == .background)
        #expect(request.headers.count == 9)
        #expect(request.deviceToken == TestRecord.mixedCaseToken.lowercased())
        #expect(request.source == TestRecord.validatorSource)
    }

    @Test(
        "a repeated apns-* header is DuplicateHeaders, whatever the case and the values, known name or not, before the key check",
        arguments: [
            [("apns-priority", "10"), ("APNS-PRIORITY", "10")],
            [("apns-topic", "com.example.app"), ("Apns-Topic", "com.example.other")],
            [("apns-foo", "1"), ("apns-bar", "2"), ("APNS-FOO", "1")],
            [("apns-channel-id", "a"), ("apns-channel-id", "b")],
            [("apns-collapse-id", nil), ("apns-collapse-id", "x")],
        ] as [[(String, String?)]])
    func duplicateHeaders(_ repeated: [(String, String?)]) throws {
        var fixture = TestRecord.forValidator().key("not a token")
        for (name, value) in repeated { fixture = fixture.addingHeader(name, value) }
        let rejection = try #require(fixture.rejection())
        #expect(rejection.reason == .duplicateHeaders)
        #expect(rejection.status == 400)
        #expect(rejection.check == .duplicateHeaders)
    }

    @Test("distinct apns-* names, and repeats of other headers, are not DuplicateHeaders")
    func notDuplicate() throws {
        let fixture = TestRecord.forValidator().addingHeader("apns-priority", "10").addingHeader("apns-foo", "1").addingHeader("apns-bar", "1")
            .addingHeader("x-trace", "1").addingHeader("X-Trace", "2").addingHeader("app-state", "background").addingHeader("app-state", "foreground")
        let request = try fixture.validate().get()
        #expect(request.appStateOverride == .foreground)
    }

    @Test("liveactivity with priority 1 is BadPriority; 5 and 10 pass")
    func liveActivityPriority() throws {
        let fixture = TestRecord.forValidator().header("apns-push-type", "liveactivity").header("apns-topic", "com.example.app.push-type.liveactivity")
        #expect(fixture.header("apns-priority", "1").rejection()?.check == .liveActivityPriority)
        #expect(fixture.header("apns-priority", "5").rejection() == nil)
        #expect(try fixture.validate().get().priority == .immediate)
    }

    @Test("values are kept: expiration, collapse id")
    func keptValues() throws {
        let request = try TestRecord.forValidator().header("apns-expiration", "1700000000").header("apns-collapse-id", "game-42").validate().get()
        #expect(request.expiration == 1_700_000_000)
        #expect(request.collapseID == "game-42")
    }

    @Test("a header without a value counts as absent")
    func nullHeader() {
        #expect(TestRecord.forValidator().header("apns-topic", nil).header("apns-topic", nil).rejection()?.reason == .missingTopic)
        let fixture = TestRecord.forValidator().addingHeader("apns-priority", nil)
        #expect(fixture.rejection() == nil)
    }

    @Test("long values are cut short in messages")
    func truncation() throws {
        let long = String(repeating: "x", count: 10_000)
        let rejection = try #require(TestRecord.forValidator().header("apns-push-type", long).rejection())
        #expect(rejection.detail.count < 400)
        #expect(rejection.detail.contains("…"))
    }
}
