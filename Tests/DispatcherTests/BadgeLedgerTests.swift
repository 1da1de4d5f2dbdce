import Dispatcher
import Foundation
import JSON
import Notifications
import Records
import Synchronization
import Testing
import TestSupport

/// SEMANTICS section 21, the badge ledger, as rules: the count an increment writes into the
/// payload (clamped at 0, seen by gating and the extension), `badgeCount` on every delivery of a
/// ledger app and null elsewhere, the badges record exactly when the badge was set or cleared
/// (an increment, `aps.badge`, an extension's badge, the legacy profile's clear), nothing when the
/// badge is unchanged (the foreground without `badge`, badges off, provisional), a record decided
/// again counted once, and the table's records: a provider's reset, deletions, and what the worker
/// makes of its own records read back.
@Suite("The badge ledger (section 21)")
struct BadgeLedgerTests {
    static let token = TestRecord.token(0x7A)
    static let key = BadgesTable.key(deviceToken: token, bundleID: Fixture.bundleID)

    /// An app with a ledger, whose foreground presents badges; `appLines` add to it.
    static func yaml(_ appLines: String = "", dispatch: String = "") -> String {
        Fixture.appYAML(
            """
                badgeLedger: true
                willPresent: [banner, list, sound, badge]
            \(appLines)
            """, dispatch: dispatch)
    }

    /// Tables whose ledger holds `count` for ``token`` (none when nil), and whose devices table
    /// holds `entry`.
    static func tables(count: Int? = nil, entry: String? = nil) -> StateTables {
        let devices = DevicesTable()
        if let entry { devices.apply(key: RecordBytes(token), value: RecordBytes(entry)) }
        var tables = StateTables(devices: devices)
        tables.badges = BadgesTable()
        if let count { tables.badges?.apply(key: RecordBytes(key), value: RecordBytes(#"{"count":\#(count)}"#)) }
        return tables
    }

    /// Decides one request to ``token`` with `headers` besides the topic, at `offset`.
    static func decide(
        _ payload: JSONValue, headers: [(String, String)] = [], yaml: String = yaml(), tables: StateTables,
        kinds: [String: TestExtension.Body] = [:], offset: Int64 = 0, topic: String = Fixture.bundleID
    ) async throws -> DispatchResult {
        let dispatcher = try Fixture.dispatcher(yaml, kinds: kinds)
        let record = TestRecord(token: token, headers: [("apns-topic", topic)] + headers, payload: payload, offset: offset).requestRecord
        return await dispatcher.decide(record, tables: tables, now: Date(timeIntervalSince1970: 1_800_000_000))
    }

    /// The badges records of `result`, as (key, value).
    static func badgesRecords(_ result: DispatchResult) throws -> [(key: String, value: JSONObject)] {
        try result.outputs.filter { $0.kind == .badge }.map { (String(decoding: $0.key ?? [], as: UTF8.self), try Fixture.object($0.value)) }
    }

    static let alert: JSONValue = ["aps": ["alert": ["title": "Ann", "body": "Lunch?"]]]

    // MARK: The count an increment writes

    @Test(
        "badge-increment N: aps.badge = max(0, c + N) in the delivered payload, badgeCount the new count, one badges record",
        arguments: [(nil as Int?, 1, 1), (4, 1, 5), (4, -1, 3), (2, -5, 0), (nil, -3, 0), (9_990, 9_999, 19_989)])
    func increment(before: Int?, increment: Int, expected: Int) async throws {
        let tables = Self.tables(count: before)
        let result = try await Self.decide(Self.alert, headers: [("badge-increment", String(increment))], tables: tables)
        let delivery = try result.deliveryValue()
        #expect(delivery["payload"]?[path: ["aps", "badge"]] == .number(JSONNumber(expected)))
        #expect(delivery["badgeEffect"] == (expected == 0 ? "clear" : "set"))
        #expect(delivery["badgeCount"] == .number(JSONNumber(expected)))
        let records = try Self.badgesRecords(result)
        #expect(records.count == 1)
        #expect(records.first?.key == Self.key)
        #expect(records.first?.value["count"] == .number(JSONNumber(expected)))
        #expect(records.first?.value["updatedAt"] == .number(JSONNumber(1_800_000_000_000)))
        #expect(tables.badges?.count(forKey: Self.key) == expected)
    }

    @Test("the increment's badge comes before gating: a payload with only the increment is badge-only (no-alert), and the extension sees the badge")
    func beforeGating() async throws {
        let badgeOnly = try await Self.decide(["aps": ["mutable-content": 1]], headers: [("badge-increment", "2")], tables: Self.tables())
        #expect(badgeOnly.reason == .noAlert)
        #expect(try badgeOnly.deliveryValue()["payload"]?[path: ["aps", "badge"]] == 2)

        let seen = Mutex<JSONValue?>(nil)
        let yaml = Self.yaml("    serviceExtension: {kind: look}")
        let result = try await Self.decide(
            Fixture.mutableAlert(), headers: [("badge-increment", "3")], yaml: yaml, tables: Self.tables(count: 1),
            kinds: [
                "look": { request in
                    seen.withLock { $0 = request.content.payload["aps"]?[path: ["badge"]] }
                    var content = request.content
                    content.payload["extra"] = "seen"
                    return content
                }
            ])
        #expect(seen.withLock { $0 } == 4)
        #expect(result.reason == .extension)
        #expect(try result.deliveryValue()["payload"]?[path: ["aps", "badge"]] == 4)
        #expect(try Self.badgesRecords(result).first?.value["count"] == 4)
    }

    @Test("an extension that changes aps.badge: the ledger follows what the device shows")
    func extensionBadge() async throws {
        let yaml = Self.yaml("    serviceExtension: {kind: zero}")
        let tables = Self.tables(count: 6)
        let result = try await Self.decide(
            Fixture.mutableAlert(), headers: [("badge-increment", "1")], yaml: yaml, tables: tables,
            kinds: [
                "zero": { request in
                    var content = request.content
                    var aps = content.payload["aps"]?.objectValue ?? [:]
                    aps["badge"] = 0
                    content.payload["aps"] = .object(aps)
                    return content
                }
            ])
        let delivery = try result.deliveryValue()
        #expect(delivery["badgeEffect"] == "clear")
        #expect(delivery["badgeCount"] == 0)
        #expect(try Self.badgesRecords(result).first?.value["count"] == 0)
        #expect(tables.badges?.count(forKey: Self.key) == 0)
    }

    // MARK: When the ledger changes

    @Test("aps.badge given: the payload unchanged, and the ledger follows it")
    func absoluteBadge() async throws {
        let tables = Self.tables(count: 3)
        let result = try await Self.decide(["aps": ["alert": "Mail", "badge": 12]], tables: tables)
        #expect(try result.deliveryValue()["badgeCount"] == 12)
        #expect(try Self.badgesRecords(result).first?.value["count"] == 12)
        #expect(tables.badges?.count(forKey: Self.key) == 12)
    }

    @Test(
        "the badge unchanged: no badges record, badgeCount the unchanged count",
        arguments: [
            ("no badge in the payload", [] as [String], nil as String?, ""),
            ("the foreground without the badge option", ["app-state:foreground"], nil, "    willPresent: [banner, list]"),
            ("badges switched off", [], #"{"badges":false}"#, ""),
            ("provisional", [], #"{"authorization":"provisional"}"#, ""),
            ("expired: discarded, the payload as received", ["apns-expiration:1700000000"], nil, ""),
        ])
    func unchanged(_ label: String, headers: [String], entry: String?, appLines: String) async throws {
        let tables = Self.tables(count: 5, entry: entry)
        var yaml = Self.yaml()
        if !appLines.isEmpty {
            // A willPresent of the app's own replaces the one every test app has.
            yaml = Fixture.appYAML("    badgeLedger: true\n" + appLines)
        }
        let pairs = headers.map { header in
            let parts = header.split(separator: ":", maxSplits: 1)
            return (String(parts[0]), String(parts[1]))
        }
        let payload: JSONValue = label == "no badge in the payload" ? Self.alert : ["aps": ["alert": "Hi"]]
        let increment = label == "no badge in the payload" ? [] : [("badge-increment", "2")]
        let result = try await Self.decide(payload, headers: pairs + increment, yaml: yaml, tables: tables)
        let delivery = try result.deliveryValue()
        #expect(delivery["badgeEffect"] == "unchanged", "\(label)")
        #expect(delivery["badgeCount"] == 5, "\(label)")
        #expect(try Self.badgesRecords(result).isEmpty, "\(label)")
        #expect(tables.badges?.count(forKey: Self.key) == 5, "\(label)")
        if label.hasPrefix("expired") {
            #expect(delivery["payload"]?[path: ["aps", "badge"]] == nil)
        } else if !increment.isEmpty {
            // The device received the increment's badge, even where it does not show it.
            #expect(delivery["payload"]?[path: ["aps", "badge"]] == 7, "\(label)")
        }
    }

    @Test("the legacy profile's clear of a payload without a badge counts 0")
    func legacyClear() async throws {
        let tables = Self.tables(count: 4)
        let result = try await Self.decide(["aps": ["alert": "Hi"]], yaml: Self.yaml(dispatch: "  profile: legacy"), tables: tables)
        let delivery = try result.deliveryValue()
        #expect(delivery["badgeEffect"] == "clear")
        #expect(delivery["badgeCount"] == 0)
        #expect(try Self.badgesRecords(result).first?.value["count"] == 0)
    }

    @Test("badgeCount is null for an app without a ledger, and absent increments leave such an app alone")
    func noLedger() async throws {
        let result = try await Self.decide(["aps": ["alert": "Hi", "badge": 3]], yaml: Fixture.appYAML(), tables: Self.tables())
        let delivery = try result.deliveryValue()
        #expect(delivery["badgeCount"] == .null)
        #expect(delivery.keys.contains("badgeCount"))
        #expect(try Self.badgesRecords(result).isEmpty)
    }

    @Test("a record decided again (its output refused) reads the count from before its first decision: counted once")
    func decidedAgain() async throws {
        let tables = Self.tables(count: 2)
        let first = try await Self.decide(Self.alert, headers: [("badge-increment", "1")], tables: tables, offset: 17)
        let again = try await Self.decide(Self.alert, headers: [("badge-increment", "1")], tables: tables, offset: 17)
        #expect(try first.deliveryValue()["badgeCount"] == 3)
        #expect(try again.deliveryValue()["badgeCount"] == 3)
        #expect(tables.badges?.count(forKey: Self.key) == 3)
        let next = try await Self.decide(Self.alert, headers: [("badge-increment", "1")], tables: tables, offset: 18)
        #expect(try next.deliveryValue()["badgeCount"] == 4)
    }

    // MARK: BadBadgeIncrement

    @Test(
        "BadBadgeIncrement: a value that is not an integer from -9999 to 9999 other than 0",
        arguments: ["0", "+0", "-0", "10000", "-10000", "1.0", "one", "", " 1", "1 ", "++1", "0x10", "99999999999999999999"])
    func badValue(_ value: String) async throws {
        let result = try await Self.decide(Self.alert, headers: [("badge-increment", value)], tables: Self.tables())
        #expect(result.deadLetter?.rejection.reason == .badBadgeIncrement, "\(value)")
        #expect(result.deadLetter?.rejection.check == .badgeIncrementHeader, "\(value)")
    }

    @Test("the bounds and the signs are accepted", arguments: ["9999", "-9999", "+7", "007"])
    func goodValue(_ value: String) async throws {
        let result = try await Self.decide(Self.alert, headers: [("badge-increment", value)], tables: Self.tables(count: 10_000))
        #expect(result.deadLetter == nil, "\(value)")
    }

    @Test(
        "BadBadgeIncrement after the topic checks: no ledger, not an alert, or aps.badge given; dlq-detail says which",
        arguments: [
            ("no ledger", "badgeLedger is not true"), ("background", "push type is background"), ("badge", "sets aps.badge itself"),
        ])
    func notAllowed(_ kind: String, detail: String) async throws {
        var yaml = Self.yaml()
        var payload = Self.alert
        var headers = [("badge-increment", "1")]
        switch kind {
        case "no ledger": yaml = Fixture.appYAML()
        case "background":
            payload = ["aps": ["content-available": 1]]
            headers += [("apns-push-type", "background"), ("apns-priority", "5")]
        default: payload = ["aps": ["alert": "Hi", "badge": 1]]
        }
        let result = try await Self.decide(payload, headers: headers, yaml: yaml, tables: Self.tables())
        let rejection = try #require(result.deadLetter?.rejection)
        #expect(rejection.reason == .badBadgeIncrement)
        #expect(rejection.check == .badgeIncrementAllowed)
        #expect(rejection.detail.contains(detail), "\(rejection.detail)")
    }

    @Test("the header checks come in section 1's order: a bad app-state before a bad increment, a bad increment before the payload")
    func order() async throws {
        let appState = try await Self.decide(
            Self.alert, headers: [("app-state", "asleep"), ("badge-increment", "x")], tables: Self.tables())
        #expect(appState.deadLetter?.rejection.reason == .badAppState)
        let payload = try await Self.decide(["aps": 1], headers: [("badge-increment", "x")], tables: Self.tables())
        #expect(payload.deadLetter?.rejection.reason == .badBadgeIncrement)
        // TopicDisallowed (step 6) before the ledger's own check.
        let topic = try await Self.decide(
            Self.alert, headers: [("badge-increment", "1")], tables: Self.tables(), topic: "com.example.other")
        #expect(topic.deadLetter?.rejection.reason == .topicDisallowed)
    }

    // MARK: The badges table

    @Test("a record from outside replaces the count; a null value deletes; a malformed one is refused and changes nothing")
    func tableRecords() throws {
        let table = BadgesTable()
        let upper = Self.token.uppercased() + "/" + Fixture.bundleID
        #expect(table.apply(key: RecordBytes(upper), value: RecordBytes(#"{"count":3,"updatedAt":5}"#)) == .set(key: Self.key, entry: .init(count: 3, updatedAt: 5)))
        #expect(table.count(forKey: Self.key) == 3)
        for (key, value) in [
            (Self.key, #"{"count":-1}"#), (Self.key, #"{"count":1.5}"#), (Self.key, #"{"updatedAt":1}"#), (Self.key, "[]"),
            (Self.key, #"{"count":1,"updatedAt":"now"}"#), (Self.token, #"{"count":1}"#), ("xyz/" + Fixture.bundleID, #"{"count":1}"#),
            (Self.token + "/", #"{"count":1}"#),
        ] {
            guard case .invalid = table.apply(key: RecordBytes(key), value: RecordBytes(value)) else {
                Issue.record("\(key) \(value) was taken")
                continue
            }
        }
        #expect(table.count(forKey: Self.key) == 3)
        #expect(table.apply(key: RecordBytes(Self.key), value: nil) == .deleted(key: Self.key))
        #expect(table.entry(forKey: Self.key) == nil)
        #expect(table.count(forKey: Self.key) == 0)
    }

    @Test("a full table refuses a new key, counts the refusal, and keeps taking known ones")
    func full() throws {
        let table = BadgesTable(limit: 1)
        table.apply(key: RecordBytes(Self.key), value: RecordBytes(#"{"count":1}"#))
        let other = BadgesTable.key(deviceToken: TestRecord.token(0x7B), bundleID: Fixture.bundleID)
        guard case .invalid = table.apply(key: RecordBytes(other), value: RecordBytes(#"{"count":1}"#)) else {
            Issue.record("a full table took a new key")
            return
        }
        #expect(table.usage.refused == 1)
        #expect(table.apply(key: RecordBytes(Self.key), value: RecordBytes(#"{"count":2}"#)) == .set(key: Self.key, entry: .init(count: 2, updatedAt: nil)))
    }

    /// A badges record without a value.
    struct NotWritten: Error {}

    /// Decides one increment into `table` at `offset` and returns the badges record's value.
    static func change(_ table: BadgesTable, offset: Int64) async throws -> RecordBytes {
        var tables = StateTables()
        tables.badges = table
        let result = try await decide(alert, headers: [("badge-increment", "1")], tables: tables, offset: offset)
        let record = try #require(result.outputs.first { $0.kind == .badge })
        guard let value = record.value else { throw NotWritten() }
        return value
    }

    @Test("the worker's own records read back change nothing, however far behind the reading is")
    func ownRecordsConfirmed() async throws {
        let table = BadgesTable(readsItsOwnChanges: true)
        let first = try await Self.change(table, offset: 1)
        let second = try await Self.change(table, offset: 2)
        #expect(table.count(forKey: Self.key) == 2)
        #expect(table.applyConsumed(key: RecordBytes(Self.key), value: first) == .confirmed(key: Self.key))
        #expect(table.count(forKey: Self.key) == 2)
        #expect(table.applyConsumed(key: RecordBytes(Self.key), value: second) == .confirmed(key: Self.key))
        #expect(table.count(forKey: Self.key) == 2)
        // Nothing awaited any more: a reset from outside now takes effect.
        #expect(table.applyConsumed(key: RecordBytes(Self.key), value: RecordBytes(#"{"count":0}"#)) == .set(key: Self.key, entry: .init(count: 0, updatedAt: nil)))
        #expect(table.count(forKey: Self.key) == 0)
    }

    @Test("a reset read while a change of the worker's own is awaited came before it in the topic: superseded, as a restore would find it")
    func resetSuperseded() async throws {
        let table = BadgesTable(readsItsOwnChanges: true)
        table.apply(key: RecordBytes(Self.key), value: RecordBytes(#"{"count":4}"#))
        let mine = try await Self.change(table, offset: 1)
        #expect(table.applyConsumed(key: RecordBytes(Self.key), value: RecordBytes(#"{"count":0}"#)) == .superseded(key: Self.key))
        #expect(table.count(forKey: Self.key) == 5)
        #expect(table.applyConsumed(key: RecordBytes(Self.key), value: mine) == .confirmed(key: Self.key))
        // The topic's last record for the key is the worker's 5: a restore reads 5 too.
        let restored = BadgesTable()
        for value in [RecordBytes(#"{"count":4}"#), RecordBytes(#"{"count":0}"#), mine] {
            restored.apply(key: RecordBytes(Self.key), value: value)
        }
        #expect(restored.count(forKey: Self.key) == table.count(forKey: Self.key))
    }

    @Test("a change that never reached the topic is forgotten once a later one comes back")
    func lostChangeForgotten() async throws {
        let table = BadgesTable(readsItsOwnChanges: true)
        _ = try await Self.change(table, offset: 1)  // its record is never written
        let kept = try await Self.change(table, offset: 2)
        #expect(table.applyConsumed(key: RecordBytes(Self.key), value: kept) == .confirmed(key: Self.key))
        #expect(table.applyConsumed(key: RecordBytes(Self.key), value: RecordBytes(#"{"count":0}"#)) == .set(key: Self.key, entry: .init(count: 0, updatedAt: nil)))
    }

    @Test("offline, the rules' changes are output only: a record equal to one of them is a record like any other")
    func offlineDoesNotAwait() async throws {
        let table = BadgesTable()
        let mine = try await Self.change(table, offset: 1)
        table.apply(key: RecordBytes(Self.key), value: RecordBytes(#"{"count":0}"#))
        #expect(table.applyConsumed(key: RecordBytes(Self.key), value: mine) == .set(key: Self.key, entry: .init(count: 1, updatedAt: 1_800_000_000_000)))
    }
}
