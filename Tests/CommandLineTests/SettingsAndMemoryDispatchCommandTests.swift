import Dispatcher
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// SEMANTICS sections 20 (the user's notification settings) and 22 (the service extension's
/// memory) through the built binary: `dispatch` on the samples `notification-settings.jsonl` and
/// `memory-limit.jsonl` with `Config/dispatcher.yaml`, devices lines that change the settings for
/// later lines, a stored notification judged when delivered, `dispatch --lint` and `explain`.
@Suite("dispatch command: the user's settings and the extension's memory (built binary)")
struct SettingsAndMemoryDispatchCommandTests {
    typealias Tokens = TokensAndUserAlertDispatchCommandTests

    static func token(_ byte: String) -> String { Tokens.token(byte) }

    /// `text` with every run of white space (the wrapping of explain's lines) as one space.
    static func words(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }

    /// The delivery records of `records`, in order.
    static func deliveries(_ records: [JSONObject]) -> [JSONObject] {
        records.filter { $0["topic"] == "notifications.deliveries" }.compactMap { $0["value"]?.objectValue }
    }

    @Test("notification-settings.jsonl: provisional quiet, denied and notDetermined not-authorized, alerts off, sounds and badges off, background unchanged")
    func settingsSample() async throws {
        let run = try await Tokens.sample("notification-settings.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty, "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.map(Tokens.summary) == [
                "delivery modified extension", "delivery original not-authorized", "delivery original push-type-not-modifiable",
                "launch backgroundDelivery", "delivery original not-authorized", "delivery original alerts-off",
                "delivery original not-mutable",
            ])
        let deliveries = Self.deliveries(records)
        // Provisional: the extension ran; delivered quietly, to the list only.
        #expect(deliveries[0]["userAlert"]?[path: ["banner"]] == false)
        #expect(deliveries[0]["userAlert"]?[path: ["list"]] == true)
        #expect(deliveries[0]["userAlert"]?[path: ["sound"]] == false)
        #expect(deliveries[0]["badgeEffect"] == "unchanged")
        #expect(deliveries[0]["extension"]?[path: ["name"]] == "tag-thread")
        // Denied, the app not running: nothing presented, nothing to open, so no launch.
        #expect(deliveries[1]["userAlert"] == .null)
        #expect(deliveries[1]["badgeEffect"] == "unchanged")
        #expect(deliveries[1]["extension"] == .null)
        #expect(deliveries[1]["appState"] == "notRunning")
        // Denied, a background push: its callback and launch as always.
        #expect(deliveries[2]["appCallback"] == "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)")
        // notDetermined: gated by 3a before rule 4 (the payload is not mutable).
        #expect(deliveries[3]["userAlert"] == .null)
        // Alerts off, force-quit: neither banner nor list, the sound and the badge apply, no launch.
        #expect(deliveries[4]["userAlert"]?[path: ["banner"]] == false)
        #expect(deliveries[4]["userAlert"]?[path: ["list"]] == false)
        #expect(deliveries[4]["userAlert"]?[path: ["sound"]] == true)
        #expect(deliveries[4]["badgeEffect"] == "set")
        // Sounds and badges off: shown, silent, the badge unchanged.
        #expect(deliveries[5]["userAlert"]?[path: ["banner"]] == true)
        #expect(deliveries[5]["userAlert"]?[path: ["sound"]] == false)
        #expect(deliveries[5]["badgeEffect"] == "unchanged")
        // The delivery gains no field (section 20).
        #expect(deliveries.allSatisfy { !$0.keys.contains("authorization") && !$0.keys.contains("settings") })
    }

    @Test("memory-limit.jsonl: the third step of ALBUM passes 4 KiB: original, extension-memory-limit, expired false; a small album and the app's own extension are modified")
    func memorySample() async throws {
        let run = try await Tokens.sample("memory-limit.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(records.map(Tokens.summary) == ["delivery original extension-memory-limit", "delivery modified extension", "delivery modified extension"])
        let deliveries = Self.deliveries(records)
        let report = try #require(deliveries[0]["extension"]?.objectValue)
        #expect(report["name"] == "tag-album+caption+inline-previews")
        #expect(report["category"] == "ALBUM")
        #expect(report["expired"] == false)
        // The original, as sent: no thread id, no subtitle from the first two steps.
        #expect(deliveries[0]["payload"]?[path: ["aps", "thread-id"]] == nil)
        #expect(deliveries[0]["payload"]?[path: ["aps", "alert", "subtitle"]] == nil)
        #expect(deliveries[0]["attachments"] == [])
        #expect(deliveries[1]["payload"]?[path: ["previews"]]?.arrayValue?.count == 3)
        #expect(deliveries[2]["extension"]?[path: ["name"]] == "tag-album")
        // The stop is logged (never the payload), as failures are.
        #expect(run.stderr.contains("service extension stopped: its memory passed extensionMemoryLimit"), "\(run.stderr)")
        #expect(run.stderr.contains("extension.error=extension-memory-limit"), "\(run.stderr)")
        #expect(run.stderr.contains("extension.step=inline-previews"), "\(run.stderr)")
        #expect(!run.stderr.contains("cdn.example.com"))
    }

    @Test("a devices line changes the settings for the lines after it; a new value replaces the whole entry; an invalid one is reported and ignored")
    func devicesLinesUpdateSettings() async throws {
        let token = Self.token("5f")
        func devices(_ value: String) -> String { #"{"topic":"notifications.devices","key":"\#(token)","value":\#(value)}"# }
        let alert = #"{"key":"\#(token)","headers":{"apns-topic":"com.example.app","app-state":"notRunning"},"value":{"aps":{"alert":"Hi","badge":1}}}"#
        let run = try await Tokens.dispatch(
            "apps: {com.example.app: {}}",
            [alert, devices(#"{"authorization":"denied"}"#), alert, devices(#"{"alerts":false}"#), alert, devices(#"{"authorization":"maybe"}"#), alert, devices("null"), alert])
        #expect(run.status == 0)
        #expect(run.stderr.contains("line 6: devices record ignored: authorization is not authorized, provisional, denied or notDetermined"), "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.map(Tokens.summary) == [
                "delivery original not-mutable", "launch userOpensNotification",
                "delivery original not-authorized",
                "delivery original alerts-off",
                // The invalid line left `alerts: false` in place.
                "delivery original alerts-off",
                "delivery original not-mutable", "launch userOpensNotification",
            ])
        let deliveries = Self.deliveries(records)
        #expect(deliveries.map { $0["badgeEffect"]?.stringValue } == ["set", "unchanged", "set", "set", "set"])
    }

    @Test("a stored notification is judged by the settings when it is delivered: back online and denied, it is not-authorized")
    func storedJudgedOnDelivery() async throws {
        let token = Self.token("5e")
        let run = try await Tokens.dispatch(
            "apps: {com.example.app: {}}",
            [
                #"{"topic":"notifications.devices","key":"\#(token)","value":{"online":false}}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.example.app","app-state":"notRunning"},"value":{"aps":{"alert":"While you were away","sound":"default"}}}"#,
                #"{"topic":"notifications.devices","key":"\#(token)","value":{"authorization":"denied"}}"#,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(records.map { $0["topic"]?.stringValue ?? "?" } == ["notifications.stored", "notifications.deliveries", "notifications.stored"])
        let delivery = try #require(Self.deliveries(records).first)
        #expect(delivery["reason"] == "not-authorized")
        #expect(delivery["userAlert"] == .null)
    }

    @Test("dispatch --lint names the settings that keep an alert from being seen, from the devices lines before it")
    func lint() async throws {
        let file = Tokens.path("Config/samples/notification-settings.jsonl")
        let run = try await DispatchCommandTests.run(["dispatch", "--config", Tokens.path("Config/dispatcher.yaml"), "--input", file, "--lint"])
        #expect(run.status == 0)
        let warnings = run.stderr.split(separator: "\n").map(String.init).filter { $0.contains(": lint ") }
        let codes = warnings.compactMap { line in line.firstMatch(of: /line (\d+): lint ([a-z0-9-]+):/).map { "\($0.output.1) \($0.output.2)" } }
        #expect(codes.contains("6 delivered-quietly"), "\(codes)")
        #expect(codes.contains("7 user-not-authorized"), "\(codes)")
        #expect(codes.contains("9 user-not-authorized"), "\(codes)")
        #expect(codes.contains("10 alerts-switched-off"), "\(codes)")
        // The background push to the same denied device is fine.
        #expect(!codes.contains { $0.hasPrefix("8 ") }, "\(codes)")
    }

    @Test("explain says which setting decided, and where a chain's memory passed its limit")
    func explain() async throws {
        let config = Tokens.path("Config/dispatcher.yaml")
        let settings = Tokens.path("Config/samples/notification-settings.jsonl")
        let denied = try await BuiltBinary.run(["explain", "--config", config, "--line", "7", settings])
        #expect(denied.status == 0, "\(denied.standardError)")
        // The text is wrapped to a width: compare words.
        let deniedWords = Self.words(denied.standardOutput)
        #expect(deniedWords.contains("→ 3a. not-authorized: applies, the user's authorization is denied (the token's devices entry)"), "\(denied.standardOutput)")
        #expect(deniedWords.contains("– 4. not-mutable (aps.mutable-content is not 1): not reached"))
        #expect(deniedWords.contains("no userOpensNotification launch: the user's authorization is denied, so nothing is shown to open"))
        #expect(deniedWords.contains("— SEMANTICS.md §20"))
        #expect(deniedWords.contains("! user-not-authorized:"))
        let quiet = try await BuiltBinary.run(["explain", "--config", config, "--line", "6", settings])
        #expect(Self.words(quiet.standardOutput).contains("provisional: delivered quietly, to the notification list only"), "\(quiet.standardOutput)")
        let memory = try await BuiltBinary.run(["explain", "--config", config, "--json", "--line", "1", Tokens.path("Config/samples/memory-limit.jsonl")])
        #expect(memory.status == 0, "\(memory.standardError)")
        let json = try JSONValue(parsing: Array(memory.standardOutput.utf8))
        #expect(json[path: ["outcome", "reason"]] == "extension-memory-limit")
        let stages = try #require(json[path: ["steps"]]?.arrayValue)
        let routing = try #require(stages.first { $0[path: ["step"]] == "routing" })
        #expect(routing[path: ["facts", "memoryLimitBytes"]] == 4_096)
        #expect(routing[path: ["facts", "memoryLimitFrom"]] == "categories.ALBUM.extensionMemoryLimit")
        let run = try #require(stages.first { $0[path: ["step"]] == "service-extension" })
        #expect(run[path: ["facts", "outcome"]] == "memory-limit")
        #expect(run[path: ["facts", "memory", "step"]] == "inline-previews")
        #expect(run[path: ["facts", "memory", "limitBytes"]] == 4_096)
        let held = try #require(run[path: ["facts", "memory", "heldBytes"]]?.numberValue.flatMap { Int($0.text) })
        #expect(held > 4_096 && held < 4_096 * 2, "\(held)")
    }
}

/// SEMANTICS section 21 through the built binary: `dispatch` on `badge-ledger.jsonl` (three
/// increments, a provider's reset, a decrement clamped at 0, an absolute badge, the dead letters
/// of the header, badges off, stored notifications counted when delivered) and `explain`.
@Suite("dispatch command: the badge ledger (built binary)")
struct BadgeLedgerDispatchCommandTests {
    typealias Tokens = TokensAndUserAlertDispatchCommandTests

    /// What each output says of the ledger: a delivery's id, badge and count, a badges record's count.
    static func ledgerSummary(_ record: JSONObject) -> String {
        let value = record["value"]?.objectValue
        switch record["topic"]?.stringValue {
        case "notifications.deliveries":
            let badge = value?["payload"]?[path: ["aps", "badge"]].map { "\($0.compactText)" } ?? "-"
            let id = String(value?["apnsId"]?.stringValue?.suffix(2) ?? "?")
            return "\(id) \(value?["reason"]?.stringValue ?? "?") badge \(badge) \(value?["badgeEffect"]?.stringValue ?? "?") count \(value?["badgeCount"]?.compactText ?? "?")"
        case "notifications.badges":
            return "badges \(value?["count"]?.compactText ?? "?")"
        default:
            return Tokens.summary(record)
        }
    }

    @Test("badge-ledger.jsonl: 1, 2, 3, reset, 1, clamped 0, set 7, unchanged, the dead letters, badges off, stored counted on delivery")
    func ledgerSample() async throws {
        let run = try await Tokens.sample("badge-ledger.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty, "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.map(Self.ledgerSummary) == [
                "01 not-mutable badge 1 set count 1", "launch userOpensNotification", "badges 1",
                "02 not-mutable badge 2 set count 2", "launch userOpensNotification", "badges 2",
                // The foreground presents badges (willPresent has badge).
                "03 not-mutable badge 3 set count 3", "badges 3",
                // After the provider's reset to 0.
                "05 not-mutable badge 1 set count 1", "launch userOpensNotification", "badges 1",
                "06 not-mutable badge 0 clear count 0", "launch userOpensNotification", "badges 0",
                "07 not-mutable badge 7 set count 7", "launch userOpensNotification", "badges 7",
                "08 not-mutable badge - unchanged count 7", "launch userOpensNotification",
                // Expired: discarded, the payload as received, the count unchanged.
                "09 expired badge - unchanged count 7",
                "dead-letter BadBadgeIncrement 400", "dead-letter BadBadgeIncrement 400", "dead-letter BadBadgeIncrement 400",
                "dead-letter BadBadgeIncrement 400", "dead-letter BadBadgeIncrement 400",
                // Badges off: the device receives the badge and does not show it.
                "0f not-mutable badge 1 unchanged count 0", "launch userOpensNotification",
                // Offline: stored, then superseded (never shown: nothing counted), then delivered
                // against the ledger as it is then (10, set while it waited): 13.
                "other notifications.stored", "11 superseded badge - unchanged count 0", "other notifications.stored",
                "12 not-mutable badge 13 set count 13", "launch userOpensNotification", "badges 13", "other notifications.stored",
            ])
        let badges = records.filter { $0["topic"] == "notifications.badges" }
        #expect(badges.allSatisfy { $0["key"]?.stringValue?.hasSuffix("/com.example.mail") == true })
        #expect(badges.allSatisfy { $0["headers"]?[path: ["apns-id"]] != nil })
        let details = records.filter { $0["topic"] == "notifications.dead-letter" }.compactMap { $0["headers"]?[path: ["dlq-detail"]]?.stringValue }
        #expect(details.count == 5)
        #expect(details[2].contains("sets aps.badge itself"))
        #expect(details[3].contains("push type is background"))
        #expect(details[4].contains("keeps no badge ledger"))
    }

    @Test("explain tells the count before, the badge the increment wrote, and what the ledger holds after")
    func explainLedger() async throws {
        let run = try await DispatchCommandTests.run([
            "explain", "--config", Tokens.path("Config/dispatcher.yaml"), "--line", "2", Tokens.path("Config/samples/badge-ledger.jsonl"),
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let words = SettingsAndMemoryDispatchCommandTests.words(run.stdout)
        #expect(words.contains("badge ledger: the device's count was 1; badge-increment +1 wrote aps.badge 2 into the payload before gating"))
        #expect(words.contains("the badge changed (set), so the ledger follows it: badgeCount 2, and a badges record follows the delivery"))
        #expect(words.contains("— SEMANTICS.md §21.2"))
        #expect(words.contains("— SEMANTICS.md §21.3"))
    }
}
