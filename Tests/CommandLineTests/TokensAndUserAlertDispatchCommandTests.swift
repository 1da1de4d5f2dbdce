import Dispatcher
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// SEMANTICS sections 1 and 2 (amended), 11, 12, 13, 17, 18 and 19 through the built binary: the
/// `dispatch` command on JSON lines, with the samples of `Config/samples/` and configurations of
/// its own.
@Suite("dispatch command: tokens, feedback, 429, filtering, what the user sees (built binary)")
struct TokensAndUserAlertDispatchCommandTests {
    static let root = DispatchCommandTests.packageRoot

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// A 64-character token of `byte` repeated.
    static func token(_ byte: String) -> String { String(repeating: byte, count: 32) }

    /// Runs `dispatch` with the YAML `configuration` (written to a temporary file) on `lines`.
    static func dispatch(_ configuration: String, _ lines: [String]) async throws -> DispatchCommandTests.Run {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("apns-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("dispatcher.yaml")
        try configuration.write(to: config, atomically: true, encoding: .utf8)
        return try await DispatchCommandTests.run(["dispatch", "--config", config.path], input: lines.joined(separator: "\n") + "\n")
    }

    /// Runs `dispatch` with `Config/dispatcher.yaml` on the sample file `name`.
    static func sample(_ name: String, config: String = "Config/dispatcher.yaml") async throws -> DispatchCommandTests.Run {
        try await DispatchCommandTests.run(["dispatch", "--config", path(config), "--input", path("Config/samples/\(name)")])
    }

    /// One output line in short: the topic's last word, then what decides it.
    static func summary(_ record: JSONObject) -> String {
        let value = record["value"]?.objectValue
        switch record["topic"]?.stringValue {
        case "notifications.deliveries":
            return "delivery \(value?["disposition"]?.stringValue ?? "?") \(value?["reason"]?.stringValue ?? "?")"
        case "notifications.launches":
            return "launch " + (value?["trigger"]?.stringValue ?? "?")
        case "notifications.feedback":
            return "feedback \(value?["reason"]?.stringValue ?? "?")"
        case "notifications.dead-letter":
            let headers = record["headers"]?.objectValue
            return "dead-letter \(headers?["dlq-reason"]?.stringValue ?? "?") \(headers?["dlq-status"]?.stringValue ?? "?")"
        case let other:
            return "other \(other ?? "?")"
        }
    }

    @Test("tokens.jsonl: devices records update the table for later lines; 410s carry dlq-timestamp; each token dead letter is followed by its feedback record")
    func tokens() async throws {
        let run = try await Self.sample("tokens.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.map(Self.summary) == [
                "dead-letter Unregistered 410", "feedback Unregistered",
                "dead-letter ExpiredToken 410", "feedback ExpiredToken",
                "dead-letter DeviceTokenNotForTopic 400", "feedback DeviceTokenNotForTopic",
                "dead-letter BadDeviceToken 400", "feedback BadDeviceToken",
                "delivery original not-mutable",
            ])
        #expect(records[0]["headers"]?[path: ["dlq-timestamp"]] == "1790000000000")
        #expect(records[2]["headers"]?[path: ["dlq-timestamp"]] == "1790000001000")
        #expect(records[4]["headers"]?[path: ["dlq-timestamp"]] == nil)
        let feedback = try #require(records[1]["value"]?.objectValue)
        #expect(
            feedback == [
                "apnsId": "7a000000-0000-4000-8000-000000000001", "deviceToken": .string(Self.token("b1")),
                "bundleId": "com.example.news", "status": 410, "reason": "Unregistered", "timestamp": 1_790_000_000_000,
                "reportedAt": "2027-01-15T08:00:00.000Z",
            ])
        #expect(feedback.keys == ["apnsId", "deviceToken", "bundleId", "status", "reason", "timestamp", "reportedAt"])
        #expect(records[1]["key"] == .string(Self.token("b1")))
        #expect(records[1]["headers"] == ["apns-id": "7a000000-0000-4000-8000-000000000001"])
        #expect(records[7]["value"]?[path: ["status"]] == 400)
        #expect(records[7]["value"]?[path: ["timestamp"]] == .null)
        // `now` is the line's timestamp: receivedAt and deliveredAt alike (section 11.1).
        #expect(records[8]["value"]?[path: ["receivedAt"]] == "2027-01-15T08:00:01.000Z")
        #expect(records[8]["value"]?[path: ["deliveredAt"]] == "2027-01-15T08:00:01.000Z")
        #expect(records[0]["headers"]?[path: ["dlq-failed-at"]] == "2027-01-15T08:00:00.000Z")
    }

    @Test("a malformed key is BadDeviceToken with a feedback record keyed by the key as given (lowercased when hex), bundleId less the push type's suffix")
    func badKeyFeedback() async throws {
        let run = try await Self.dispatch(
            "apps: {com.example.app: {}}",
            [
                #"{"key":"ABCDEF","headers":{"apns-topic":"com.example.app.voip","apns-push-type":"voip","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},"value":{"aps":{}}}"#,
                #"{"key":"not hex","headers":{},"value":{"aps":{}}}"#,
                #"{"key":"\#(Self.token("ab"))","headers":{"apns-topic":"com.example.app"},"value":{"aps":{"alert":5}}}"#,
            ])
        let records = try run.records()
        #expect(records.map(Self.summary) == ["dead-letter BadDeviceToken 400", "feedback BadDeviceToken", "dead-letter BadDeviceToken 400", "feedback BadDeviceToken", "dead-letter InvalidPayload 400"])
        #expect(records[1]["key"] == "abcdef")
        #expect(records[1]["value"]?[path: ["deviceToken"]] == "abcdef")
        #expect(records[1]["value"]?[path: ["bundleId"]] == "com.example.app")
        #expect(records[1]["headers"]?[path: ["traceparent"]] == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        #expect(records[3]["key"] == "not hex")
        #expect(records[3]["value"]?[path: ["bundleId"]] == .null)
    }

    @Test("the token checks come after every check of sections 1 and 2, in their order; mdm skips the app check; a token without entry passes")
    func tokenCheckOrder() async throws {
        let token = Self.token("cd")
        let run = try await Self.dispatch(
            "dispatch: {environment: sandbox}\napps: {com.example.app: {}}",
            [
                #"{"topic":"notifications.devices","key":"\#(token.uppercased())","value":{"bundleId":"com.example.other","environment":"sandbox","token":"unregistered","since":5}}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.example.app"},"value":{"aps":{"alert":5}}}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.example.app"},"value":{"aps":{"alert":"hi"}}}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.apple.mgmt.X","apns-push-type":"mdm"},"value":{"mdm":"magic"}}"#,
                #"{"topic":"notifications.devices","key":"\#(token)","value":{"environment":"production"}}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.example.app"},"value":{"aps":{"alert":"hi"}}}"#,
                #"{"topic":"notifications.devices","key":"\#(token)","value":null}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.example.app"},"value":{"aps":{"alert":"hi"}}}"#,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            try run.records().map(Self.summary) == [
                "dead-letter InvalidPayload 400",
                "dead-letter DeviceTokenNotForTopic 400", "feedback DeviceTokenNotForTopic",
                "dead-letter Unregistered 410", "feedback Unregistered",
                "dead-letter BadDeviceToken 400", "feedback BadDeviceToken",
                "delivery original not-mutable", "launch userOpensNotification",
            ])
    }

    @Test("a malformed devices record is reported on standard error and ignored; the exit status stays 0")
    func malformedDevicesRecord() async throws {
        let token = Self.token("ce")
        let run = try await Self.dispatch(
            "apps: {com.example.app: {}}",
            [
                #"{"topic":"notifications.devices","key":"\#(token)","value":{"token":"unregistered"}}"#,
                #"{"topic":"notifications.devices","key":"\#(token)","value":{"focus":"dnd"}}"#,
                #"{"topic":"notifications.devices","key":"short","value":{}}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.example.app"},"value":{"aps":{"alert":"hi"}}}"#,
            ])
        #expect(run.status == 0)
        #expect(run.stderr.contains("line 1: devices record ignored: since is required when token is unregistered"))
        #expect(run.stderr.contains("line 2: devices record ignored: focus is not none, silencing or allowing"))
        #expect(run.stderr.contains("line 3: devices record ignored: the key is not a device token"))
        #expect(try run.records().map(Self.summary) == ["delivery original not-mutable", "launch userOpensNotification"])
    }

    @Test("too-many-requests.jsonl: only accepted requests count, in the window (now - window, now]; no feedback record")
    func tooManyRequests() async throws {
        let run = try await Self.sample("too-many-requests.jsonl", config: "Config/examples/too-many-requests.yaml")
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.filter { $0["topic"] != "notifications.launches" }.map(Self.summary) == [
                "delivery original not-mutable", "delivery original not-mutable", "dead-letter TooManyRequests 429",
                "delivery original not-mutable",
            ])
        let refused = try #require(records.first { $0["topic"] == "notifications.dead-letter" })
        #expect(refused["headers"]?[path: ["dlq-detail"]]?.stringValue?.contains("allows 2") == true)
        #expect(!records.contains { $0["topic"] == "notifications.feedback" })
    }

    @Test("without dispatch.tooManyRequests nothing is limited")
    func noLimitByDefault() async throws {
        let run = try await Self.sample("too-many-requests.jsonl")
        #expect(try run.records().map(Self.summary) == Array(repeating: "delivery original not-mutable", count: 4))
    }

    @Test("headers.jsonl: a repeated apns-* header (list or object, any case) is DuplicateHeaders; other repeats: the last wins; output headers keep repeats in order")
    func duplicateHeaders() async throws {
        let run = try await Self.sample("headers.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let records = try run.records()
        #expect(records.map(Self.summary) == ["dead-letter DuplicateHeaders 400", "delivery original not-mutable", "dead-letter DuplicateHeaders 400"])
        #expect(lines[0].contains(#""apns-priority":"10","APNS-PRIORITY":"5""#))
        #expect(lines[2].contains(#""apns-push-type":"alert","apns-push-type":"alert""#))
        #expect(records[1]["headers"]?[path: ["traceparent"]] == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    }

    @Test("DuplicateHeaders is check 0: before the key check")
    func duplicateBeforeKey() async throws {
        let run = try await Self.dispatch(
            "", [#"{"key":null,"headers":[["apns-id","x"],["Apns-Id","y"]],"value":""}"#])
        #expect(try run.records().map(Self.summary) == ["dead-letter DuplicateHeaders 400"])
    }

    @Test("a line's timestamp must be an integer from 0 to 253402300799999; headers must be an object or [name, value] pairs")
    func lineFormat() async throws {
        let token = Self.token("ab")
        let run = try await Self.dispatch(
            "",
            [
                #"{"key":"\#(token)","headers":{"apns-topic":"a.b"},"value":{"aps":{"alert":"x"}},"timestamp":-1}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"a.b"},"value":{"aps":{"alert":"x"}},"timestamp":1.5}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"a.b"},"value":{"aps":{"alert":"x"}},"timestamp":253402300800000}"#,
                #"{"key":"\#(token)","headers":[["apns-topic"]],"value":{"aps":{"alert":"x"}}}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"a.b"},"value":{"aps":{"alert":"x"}},"timestamp":253402300799999}"#,
            ])
        #expect(run.status == 1)
        for line in 1...4 { #expect(run.stderr.contains("line \(line): invalid record")) }
        let records = try run.records().filter { $0["topic"] == "notifications.deliveries" }
        #expect(records.count == 1)
        #expect(records.first?["value"]?[path: ["receivedAt"]]?.stringValue?.hasPrefix("9999-12-31T23:59:59.99") == true)
    }

    @Test("mdm.jsonl: an mdm push without aps is delivered to no app; without the header it is InvalidPayload")
    func mdm() async throws {
        let run = try await Self.sample("mdm.jsonl")
        let records = try run.records()
        #expect(records.map(Self.summary) == ["delivery original push-type-not-modifiable", "dead-letter InvalidPayload 400"])
        let value = try #require(records.first?["value"]?.objectValue)
        #expect(value["bundleId"] == "com.apple.mgmt.External.2d8f5e1c-5c5b-4a5e-9f3e-6c2f7c1b2a90")
        #expect(value["appCallback"] == .null)
        #expect(value["badgeEffect"] == "unchanged")
        #expect(value["userAlert"] == .null)
    }

    @Test("an mdm payload needs mdm, a non-empty string; its aps is typed when present; legacy: no launch, badge unchanged")
    func mdmRules() async throws {
        let token = Self.token("ab")
        func line(_ value: String) -> String {
            #"{"key":"\#(token)","headers":{"apns-topic":"com.apple.mgmt.X","apns-push-type":"mdm","app-state":"notRunning"},"value":\#(value)}"#
        }
        let modern = try await Self.dispatch("apps: {com.example.app: {}}", [line(#"{"mdm":""}"#), line(#"{"mdm":"m","aps":{"badge":"1"}}"#), line(#"{"mdm":"m","aps":{"alert":"hi"}}"#)])
        #expect(try modern.records().map(Self.summary) == ["dead-letter InvalidPayload 400", "dead-letter InvalidPayload 400", "delivery original push-type-not-modifiable"])
        let legacy = try await Self.dispatch("dispatch: {profile: legacy}", [line(#"{"mdm":"m","aps":{"alert":"hi"}}"#)])
        let records = try legacy.records()
        #expect(records.map(Self.summary) == ["delivery original legacy-profile"])
        #expect(records.first?["value"]?[path: ["badgeEffect"]] == "unchanged")
    }

    @Test("widgets.jsonl: widgetReload follows content-changed for widgets and controls; a Live Activity alert may use loc objects (modern)")
    func widgets() async throws {
        let run = try await Self.sample("widgets.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(records.map(Self.summary) == Array(repeating: "delivery original push-type-not-modifiable", count: 3))
        #expect(records.map { $0["value"]?[path: ["widgetReload"]] } == [true, false, .null])
        // An update for an activity the table does not have (section 14.3 row 4).
        #expect(records[2]["value"]?[path: ["liveActivity", "result"]] == "no-activity")
        #expect(records[2]["value"]?[path: ["liveActivity", "state"]] == .null)
        #expect(records[2]["value"]?[path: ["channelId"]] == .null)
    }

    @Test("Live Activity rules: loc objects only for liveactivity in modern; priority 1 is BadPriority; the new aps keys are typed for every push type")
    func liveActivityTypes() async throws {
        let token = Self.token("ab")
        func line(_ pushType: String, _ aps: String, priority: String = "10") -> String {
            let topic = pushType == "liveactivity" ? "com.example.app.push-type.liveactivity" : "com.example.app"
            return #"{"key":"\#(token)","headers":{"apns-topic":"\#(topic)","apns-push-type":"\#(pushType)","apns-priority":"\#(priority)"},"value":{"aps":\#(aps)}}"#
        }
        let loc = #"{"event":"update","timestamp":1,"alert":{"title":{"loc-key":"T","loc-args":["a"]}}}"#
        let run = try await Self.dispatch(
            "",
            [
                line("liveactivity", loc), line("alert", #"{"alert":{"title":{"loc-key":"T"}}}"#), line("liveactivity", loc, priority: "1"),
                line("liveactivity", #"{"alert":{"title":{"loc-args":["a"]}}}"#), line("alert", #"{"alert":"x","event":"begin"}"#),
                line("alert", #"{"alert":"x","timestamp":1.5}"#), line("alert", #"{"alert":"x","content-state":[]}"#),
                line("alert", #"{"alert":"x","input-push-channel":3}"#), line("widgets", #"{"content-changed":1}"#),
            ])
        #expect(
            try run.records().map(Self.summary) == [
                "delivery original push-type-not-modifiable", "dead-letter InvalidPayload 400", "dead-letter BadPriority 400",
                "dead-letter InvalidPayload 400", "dead-letter InvalidPayload 400", "dead-letter InvalidPayload 400",
                "dead-letter InvalidPayload 400", "dead-letter InvalidPayload 400", "dead-letter InvalidPayload 400",
            ])
        let legacy = try await Self.dispatch("dispatch: {profile: legacy}", [line("liveactivity", #"{"alert":{"title":{"loc-key":"T"}}}"#)])
        #expect(try legacy.records().map(Self.summary) == ["dead-letter InvalidPayload 400"])
    }

    @Test("user-alerts.jsonl: interruption level, Focus, willPresent and its options, banner, list, sound, and the foreground badge rule")
    func userAlerts() async throws {
        let run = try await Self.sample("user-alerts.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let alerts = try run.records().filter { $0["topic"] == "notifications.deliveries" }.map { $0["value"]?.objectValue ?? [:] }
        #expect(alerts.count == 6)
        let method: JSONValue = .string(UserAlert.willPresentMethod)
        #expect(
            alerts[0]["userAlert"] == [
                "interruptionLevel": "time-sensitive", "focus": "breakthrough", "willPresent": .null, "options": .null,
                "banner": true, "list": true, "sound": true,
            ])
        #expect(alerts[1]["userAlert"]?[path: ["interruptionLevel"]] == "passive")
        #expect(alerts[1]["userAlert"]?[path: ["focus"]] == "silenced")
        #expect(alerts[1]["userAlert"]?[path: ["banner"]] == false)
        #expect(alerts[1]["userAlert"]?[path: ["list"]] == true)
        // time-sensitive without the entitlement is active, which a silencing Focus silences.
        #expect(alerts[2]["userAlert"]?[path: ["interruptionLevel"]] == "active")
        #expect(alerts[2]["userAlert"]?[path: ["focus"]] == "silenced")
        #expect(
            alerts[3]["userAlert"] == [
                "interruptionLevel": "active", "focus": "off", "willPresent": method, "options": ["banner", "list"],
                "banner": true, "list": true, "sound": false,
            ])
        #expect(alerts[3]["badgeEffect"] == "unchanged")
        #expect(alerts[4]["userAlert"]?[path: ["options"]] == ["banner", "list", "sound", "badge"])
        #expect(alerts[4]["userAlert"]?[path: ["sound"]] == true)
        #expect(alerts[4]["badgeEffect"] == "set")
        #expect(
            alerts[5]["userAlert"] == [
                "interruptionLevel": "active", "focus": "off", "willPresent": .null, "options": [],
                "banner": false, "list": false, "sound": false,
            ])
        #expect(alerts[5]["badgeEffect"] == "unchanged")
        let fields = alerts[0].keys.suffix(6)
        #expect(Array(fields) == ["liveActivity", "channelId", "widgetReload", "userAlert", "receivedAt", "deliveredAt"])
    }

    @Test("userAlert: critical needs criticalAlerts; timeSensitive false in the devices entry keeps a silencing Focus; null in legacy and for other push types")
    func userAlertEdges() async throws {
        let token = Self.token("ab")
        let yaml = """
            apps:
              com.example.app:
                entitlements: [timeSensitive, criticalAlerts]
              com.example.plain: {}
            """
        func line(_ topic: String, _ aps: String, pushType: String = "alert") -> String {
            #"{"key":"\#(token)","headers":{"apns-topic":"\#(topic)","apns-push-type":"\#(pushType)","app-state":"background"},"value":{"aps":\#(aps)}}"#
        }
        let run = try await Self.dispatch(
            yaml,
            [
                #"{"topic":"notifications.devices","key":"\#(token)","value":{"focus":"silencing","timeSensitive":false}}"#,
                line("com.example.app", #"{"alert":"x","interruption-level":"critical"}"#),
                line("com.example.plain", #"{"alert":"x","interruption-level":"critical"}"#),
                line("com.example.app", #"{"alert":"x","interruption-level":"time-sensitive"}"#),
                line("com.example.app", #"{"content-available":1}"#, pushType: "background"),
                line("com.example.app", #"{"content-available":1}"#),
            ])
        let values = try run.records().filter { $0["topic"] == "notifications.deliveries" }.map { $0["value"]?.objectValue ?? [:] }
        #expect(values.map { $0["userAlert"]?[path: ["focus"]] ?? .null } == ["breakthrough", "silenced", "silenced", .null, .null])
        #expect(values[1]["userAlert"]?[path: ["interruptionLevel"]] == "active")
        let legacy = try await Self.dispatch("dispatch: {profile: legacy}", [line("com.example.app", #"{"alert":"x"}"#)])
        #expect(try legacy.records().first?["value"]?[path: ["userAlert"]] == .null)
    }

    @Test("filtering.jsonl: an extension that removes the alert text suppresses the notification when the app has the filtering entitlement")
    func filtering() async throws {
        let run = try await Self.sample("filtering.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(records.map(Self.summary) == ["delivery discarded extension-filtered"])
        let value = try #require(records.first?["value"]?.objectValue)
        #expect(value["payload"]?[path: ["aps", "alert"]] == "Sync finished")
        #expect(value["extension"]?[path: ["name"]] == "drop-alert")
        #expect(value["extension"]?[path: ["category"]] == "SYNC")
        #expect(value["attachments"] == [])
        #expect(value["presentation"] == .null)
        #expect(value["userAlert"] == .null)
        #expect(value["badgeEffect"] == "unchanged")
        #expect(value["appCallback"] == .null)
    }

    @Test("without the filtering entitlement the same extension gives alert-removed and the original is shown")
    func withoutFiltering() async throws {
        let yaml = """
            apps:
              com.example.health:
                categories:
                  SYNC:
                    serviceExtension: {kind: rewrite, name: drop-alert, remove: [aps.alert]}
            """
        let run = try await Self.dispatch(yaml, [String(decoding: FileManager.default.contents(atPath: Self.path("Config/samples/filtering.jsonl")) ?? Data(), as: UTF8.self).trimmingCharacters(in: .newlines)])
        let records = try run.records()
        #expect(records.map(Self.summary) == ["delivery original alert-removed", "launch userOpensNotification"])
        #expect(records.first?["value"]?[path: ["userAlert", "list"]] == true)
    }

    @Test("a new setting that is malformed stops dispatch with the key path (exit 2)")
    func malformedSettings() async throws {
        let cases: [(String, String)] = [
            ("dispatch: {environment: staging}", "dispatch.environment"),
            ("dispatch: {storagePeriod: 30}", "dispatch.storagePeriod"),
            ("dispatch: {tooManyRequests: {limit: 0, window: 1m}}", "dispatch.tooManyRequests.limit"),
            ("dispatch: {tooManyRequests: {limit: 3}}", "dispatch.tooManyRequests.window"),
            ("apps: {app: {entitlements: [push]}}", "apps.app.entitlements[0]"),
            ("apps: {app: {willPresent: banner}}", "apps.app.willPresent"),
            ("apps: {app: {categories: {C: {willPresent: [alert]}}}}", "apps.app.categories.C.willPresent[0]"),
            ("apps: {app: {liveActivityBudget: 0}}", "apps.app.liveActivityBudget"),
            ("topics: {feedback: \"\"}", "topics.feedback"),
        ]
        for (yaml, keyPath) in cases {
            let run = try await Self.dispatch(yaml, [])
            #expect(run.status != 0, "\(yaml)")
            #expect(run.stderr.contains(keyPath), "\(yaml): \(run.stderr)")
        }
    }

    @Test("explain names the new rules: what the user sees with its quote, and 429 after the lines before it, as dispatch decides")
    func explainNamesTheRules() async throws {
        // The text is wrapped to the terminal's width: compare words.
        func words(_ run: DispatchCommandTests.Run) -> String { run.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        let userAlerts = try await DispatchCommandTests.run(["explain", "--config", Self.path("Config/dispatcher.yaml"), "--line", "5", Self.path("Config/samples/user-alerts.jsonl")])
        #expect(userAlerts.status == 0, "\(userAlerts.stderr)")
        #expect(words(userAlerts).contains("what the user sees: interruption level active, Focus off, in the foreground willPresent passes [banner, list]; banner yes, list yes, sound no"))
        #expect(words(userAlerts).contains("a badge (0 included) takes effect only when badge ∈ options"))
        let limited = try await DispatchCommandTests.run([
            "explain", "--config", Self.path("Config/examples/too-many-requests.yaml"), "--line", "3", Self.path("Config/samples/too-many-requests.jsonl"),
        ])
        #expect(words(limited).contains("TooManyRequests"), "\(limited.stdout)")
        #expect(words(limited).contains("dispatch.tooManyRequests allows 2"))
        let filtered = try await DispatchCommandTests.run(["explain", "--config", Self.path("Config/dispatcher.yaml"), Self.path("Config/samples/filtering.jsonl")])
        #expect(words(filtered).contains("extension-filtered"))
        #expect(words(filtered).contains("An app whose entitlements include filtering may suppress a notification"))
    }
}
