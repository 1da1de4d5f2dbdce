import Records
import Dispatcher
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// SEMANTICS sections 11.2, 12 and 17 as plain values: the devices table, the request counts, and
/// the rules that read them through `StateTables`.
@Suite("Devices table, request counts and the rules that read them (sections 11, 12, 17)")
struct StateTablesTests {
    private let token = TestRecord.token(0xAB)

    @Test("a devices record sets the whole entry under the normalised token, with defaults; a new one replaces it; null deletes")
    func devicesTable() throws {
        let table = DevicesTable()
        #expect(table.device(forDeviceToken: token) == nil)
        table.apply(key: RecordBytes(token.uppercased()), value: RecordBytes(#"{"bundleId":"b","focus":"silencing","x":1,"online":null}"#))
        let entry = try #require(table.device(forDeviceToken: token))
        #expect(entry.bundleID == "b")
        #expect(entry.focus == .silencing)
        #expect(entry.token == .active)
        #expect(entry.online)
        #expect(entry.timeSensitive)
        table.apply(key: RecordBytes(token), value: RecordBytes(#"{"token":"expired","since":7}"#))
        #expect(table.device(forDeviceToken: token)?.bundleID == nil)
        #expect(table.device(forDeviceToken: token)?.since == 7)
        #expect(table.apply(key: RecordBytes(token), value: nil) == .deleted(deviceToken: token))
        #expect(table.count == 0)
    }

    @Test("every value of every entry field is read back as set, and setting one field leaves the others as they were")
    func entryFieldsAreIndependent() throws {
        let defaults = DeviceEntry()
        #expect(defaults.bundleID == nil && defaults.environment == nil && defaults.since == nil)
        #expect(defaults.token == .active && defaults.online && defaults.focus == DeviceEntry.Focus.none && defaults.timeSensitive)
        #expect(defaults.settings == NotificationSettings.defaults)
        // Each change applied alone to an entry whose every field differs from the defaults where
        // it can (and to the defaults): only the field changed reads differently.
        var other = DeviceEntry()
        other.bundleID = "app"
        other.environment = .sandbox
        other.token = .expired
        other.since = 9
        other.online = false
        other.focus = .allowing
        other.timeSensitive = false
        other.settings = NotificationSettings(authorization: .notDetermined, alerts: false, sounds: false, badges: false)
        var changes: [(name: String, change: (inout DeviceEntry) -> Void)] = []
        for environment in [nil] + APNsEnvironment.allCases { changes.append(("environment", { $0.environment = environment })) }
        for token in DeviceEntry.TokenStatus.allCases { changes.append(("token", { $0.token = token })) }
        for focus in DeviceEntry.Focus.allCases { changes.append(("focus", { $0.focus = focus })) }
        for flag in [false, true] {
            changes.append(("online", { $0.online = flag }))
            changes.append(("timeSensitive", { $0.timeSensitive = flag }))
            changes.append(("alerts", { $0.settings.alerts = flag }))
            changes.append(("sounds", { $0.settings.sounds = flag }))
            changes.append(("badges", { $0.settings.badges = flag }))
        }
        for authorization in NotificationSettings.Authorization.allCases {
            changes.append(("authorization", { $0.settings.authorization = authorization }))
        }
        func fields(_ entry: DeviceEntry) -> [String: String] {
            [
                "bundleID": "\(entry.bundleID as Any)", "environment": "\(entry.environment as Any)", "token": "\(entry.token)",
                "since": "\(entry.since as Any)", "online": "\(entry.online)", "focus": "\(entry.focus)",
                "timeSensitive": "\(entry.timeSensitive)", "authorization": "\(entry.settings.authorization)",
                "alerts": "\(entry.settings.alerts)", "sounds": "\(entry.settings.sounds)", "badges": "\(entry.settings.badges)",
            ]
        }
        for start in [defaults, other] {
            for (name, change) in changes {
                var changed = start
                change(&changed)
                let before = fields(start)
                let after = fields(changed)
                for (field, value) in before where field != name {
                    #expect(after[field] == value, "setting \(name) changed \(field)")
                }
                #expect((changed == start) == (after == before), "\(name): == disagrees with the fields")
            }
        }
        // Equal entries hash alike, whatever order their fields were set in.
        var reversed = DeviceEntry()
        reversed.settings = other.settings
        reversed.timeSensitive = false
        reversed.focus = .allowing
        reversed.online = false
        reversed.since = 9
        reversed.token = .expired
        reversed.environment = .sandbox
        reversed.bundleID = "app"
        #expect(reversed == other && reversed.hashValue == other.hashValue)
        // The value set is the value read.
        var entry = DeviceEntry()
        for environment in [nil] + APNsEnvironment.allCases {
            entry.environment = environment
            #expect(entry.environment == environment)
        }
        for token in DeviceEntry.TokenStatus.allCases {
            entry.token = token
            #expect(entry.token == token)
        }
        for focus in DeviceEntry.Focus.allCases {
            entry.focus = focus
            #expect(entry.focus == focus)
        }
        for authorization in NotificationSettings.Authorization.allCases {
            entry.settings.authorization = authorization
            #expect(entry.settings.authorization == authorization)
        }
    }

    @Test(
        "malformed devices records are ignored, naming the field, and leave the table as it was",
        arguments: [
            (#"{"token":"unregistered"}"#, "since is required"), (#"{"environment":"dev"}"#, "environment"),
            (#"{"since":-1,"token":"expired"}"#, "since"), (#"{"since":1.5}"#, "since"), (#"{"online":"yes"}"#, "online"),
            (#"{"timeSensitive":1}"#, "timeSensitive"), (#"{"bundleId":5}"#, "bundleId"), ("[]", "not a JSON object"),
        ])
    func malformedDevices(_ value: String, _ mentions: String) {
        let table = DevicesTable()
        table.apply(key: RecordBytes(token), value: RecordBytes(#"{"bundleId":"kept"}"#))
        guard case .invalid(let reason) = table.apply(key: RecordBytes(token), value: RecordBytes(value)) else {
            Issue.record("\(value) was taken")
            return
        }
        #expect(reason.contains(mentions), "\(reason)")
        #expect(table.device(forDeviceToken: token)?.bundleID == "kept")
    }

    @Test("the request window counts only accepted requests, in (now - window, now]")
    func requestWindow() {
        let window = RequestRateWindow(RequestRateLimit(limit: 2, window: .seconds(10)))
        func record(_ offset: Int64) -> RequestRateWindow.RecordPosition { .init(partition: 0, offset: offset) }
        #expect(window.admit("t", now: 1_000, record: record(1)) == nil)
        #expect(window.admit("t", now: 2_000, record: record(2)) == nil)
        #expect(window.admit("t", now: 3_000, record: record(3)) == 2)
        // Refused requests did not count: at 11.0 s only the one at 2.0 s is left.
        #expect(window.admit("t", now: 11_000, record: record(4)) == nil)
        #expect(window.admit("t", now: 11_500, record: record(5)) == 2)
        // Another token has its own count.
        #expect(window.admit("u", now: 11_500, record: record(6)) == nil)
    }

    @Test("a record counted once is accepted again without a second count (it is decided again after a refused output)")
    func requestWindowCountsARecordOnce() {
        let window = RequestRateWindow(RequestRateLimit(limit: 2, window: .seconds(10)))
        let first = RequestRateWindow.RecordPosition(partition: 3, offset: 40)
        #expect(window.admit("t", now: 1_000, record: first) == nil)
        // The same record again (a replay): accepted, not counted.
        #expect(window.admit("t", now: 1_500, record: first) == nil)
        #expect(window.admit("t", now: 1_600, record: first) == nil)
        // One more record fits the limit of 2; the next one is refused, with 2 counted.
        #expect(window.admit("t", now: 2_000, record: .init(partition: 3, offset: 41)) == nil)
        #expect(window.admit("t", now: 2_100, record: .init(partition: 3, offset: 42)) == 2)
        // The same offset in another partition is another record.
        #expect(window.admit("u", now: 2_000, record: .init(partition: 4, offset: 40)) == nil)
    }

    @Test("token checks read the devices table through StateTables; without an entry a token passes; mdm skips the app check")
    func tokenChecks() async throws {
        let dispatcher = try Fixture.dispatcher("dispatch: {environment: sandbox}\napps: {com.example.app: {}}")
        let devices = DevicesTable()
        let tables = StateTables(devices: devices)
        let record = TestRecord(payload: ["aps": ["alert": "hi"]]).requestRecord
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(await dispatcher.dispatch(record, tables: tables, now: now).delivery != nil)
        devices.apply(key: RecordBytes(token), value: RecordBytes(#"{"environment":"production"}"#))
        #expect(await dispatcher.dispatch(record, tables: tables, now: now).rejectionReason == .badDeviceToken)
        devices.apply(key: RecordBytes(token), value: RecordBytes(#"{"bundleId":"com.example.other","token":"unregistered","since":5}"#))
        let other = await dispatcher.dispatch(record, tables: tables, now: now)
        #expect(other.rejectionReason == .deviceTokenNotForTopic)
        #expect(other.outputs.map(\.kind) == [.deadLetter, .feedback])
        let mdm = TestRecord(headers: [("apns-topic", "com.apple.mgmt.X"), ("apns-push-type", "mdm")], payload: ["mdm": "m"]).requestRecord
        let gone = await dispatcher.dispatch(mdm, tables: tables, now: now)
        #expect(gone.rejectionReason == .unregistered)
        #expect(gone.deadLetter?.rejection.status == 410)
        #expect(gone.header("dlq-timestamp") == "5")
        let feedback = try Fixture.object(gone.outputs[1].value)
        #expect(feedback["bundleId"] == "com.apple.mgmt.X")
        #expect(feedback["timestamp"] == 5)
        #expect(feedback["reportedAt"] == "2027-01-15T08:00:00.000Z")
    }

    @Test(
        "the token's app is compared with the request's topic as strings: the same bytes and canonically equivalent text pass, another app does not",
        arguments: [
            ("com.example.app", "com.example.app", true), ("com.example.app", "com.example.other", false),
            ("com.example.caf\u{E9}", "com.example.cafe\u{301}", true), ("com.example.caf\u{E9}", "com.example.cafe", false),
        ])
    func tokenAppComparison(_ topic: String, _ entryBundleID: String, _ passes: Bool) async throws {
        // The configured app's topic is found by its index, another one read from the header (with
        // apps configured, a topic of none of them is TopicDisallowed before any token check).
        for configuration in topic == "com.example.app" ? ["apps: {com.example.app: {}}", "{}"] : ["{}"] {
            let dispatcher = try Fixture.dispatcher(configuration)
            let devices = DevicesTable()
            let tables = StateTables(devices: devices)
            let escaped = entryBundleID.unicodeScalars.map { $0.isASCII ? String($0) : String(format: "\\u%04x", $0.value) }.joined()
            devices.apply(key: RecordBytes(token), value: RecordBytes(#"{"bundleId":"\#(escaped)"}"#))
            #expect(devices.device(forDeviceToken: token)?.bundleID == entryBundleID)
            let record = TestRecord(headers: [("apns-topic", topic)], payload: ["aps": ["alert": "hi"]]).requestRecord
            let result = await dispatcher.dispatch(record, tables: tables, now: Date(timeIntervalSince1970: 1_800_000_000))
            if passes {
                #expect(result.delivery != nil, "\(topic) against \(entryBundleID), \(configuration): \(String(describing: result.rejectionReason))")
            } else {
                #expect(result.rejectionReason == .deviceTokenNotForTopic, "\(topic) against \(entryBundleID), \(configuration)")
            }
        }
    }

    @Test("userAlert: the level, Focus, willPresent options and what is shown, from the configuration and the devices entry")
    func userAlert() async throws {
        let yaml = """
            apps:
              com.example.app:
                entitlements: [criticalAlerts]
                willPresent: [list, sound, banner]
            """
        let dispatcher = try Fixture.dispatcher(yaml)
        let devices = DevicesTable()
        devices.apply(key: RecordBytes(token), value: RecordBytes(#"{"focus":"silencing"}"#))
        let tables = StateTables(devices: devices)
        func alert(_ aps: JSONValue, state: String) async throws -> JSONObject? {
            let record = TestRecord(headers: [("apns-topic", Fixture.bundleID), ("app-state", state)], payload: ["aps": aps]).requestRecord
            return try await dispatcher.dispatch(record, tables: tables, now: Date()).deliveryValue()["userAlert"]?.objectValue
        }
        let critical = try #require(try await alert(["alert": "x", "sound": "s", "interruption-level": "critical"], state: "background"))
        #expect(critical["focus"] == "breakthrough")
        #expect(critical["banner"] == true)
        let foreground = try #require(try await alert(["alert": "x", "sound": "s"], state: "foreground"))
        // Options are written in the documented order, whatever the configuration's.
        #expect(foreground["options"] == ["banner", "list", "sound"])
        #expect(foreground["focus"] == "silenced")
        #expect(foreground["banner"] == false)
        #expect(foreground["list"] == true)
        #expect(foreground["sound"] == false)
        #expect(try await alert(["content-available": 1], state: "background") == nil)
    }
}
