import Dispatcher
import Foundation
import JSON
import Notifications
import Records
import Testing
import TestSupport

/// SEMANTICS section 20, the user's notification settings, as rules: the four devices-entry
/// fields, gating rules 3a and 3b, each row of the table of `userAlert`, `badgeEffect` and the
/// `userOpensNotification` launch, what stays unchanged (background pushes, other push types, the
/// legacy profile), and stored notifications judged when they are delivered.
@Suite("The user's notification settings (section 20)")
struct NotificationSettingsTests {
    static let token = TestRecord.token(0x5A)

    /// An app whose extension adds a subtitle, so that any request gating lets through is modified.
    static let yaml = Fixture.appYAML(Fixture.subtitleExtension)

    /// A devices table holding `entry` (a devices record's JSON value) for ``token``.
    static func devices(_ entry: String?) -> DevicesTable {
        let table = DevicesTable()
        if let entry { table.apply(key: RecordBytes(token), value: RecordBytes(entry)) }
        return table
    }

    /// Dispatches `payload` to ``token`` in `state`, whose devices entry is `entry` (none when nil).
    static func dispatch(
        _ payload: JSONValue, entry: String?, state: String = "background", pushType: String? = nil, yaml: String = yaml
    ) async throws -> DispatchResult {
        var headers = [("apns-topic", Fixture.bundleID), ("app-state", state)]
        if let pushType { headers.append(("apns-push-type", pushType)) }
        if pushType == "background" { headers.append(("apns-priority", "5")) }
        let dispatcher = try Fixture.dispatcher(yaml)
        let tables = StateTables(devices: devices(entry))
        return await dispatcher.decide(TestRecord(token: token, headers: headers, payload: payload).requestRecord, tables: tables, now: Date())
    }

    /// A mutable alert with a sound and a badge: everything a setting can take away.
    static let full: JSONValue = ["aps": ["alert": ["title": "Hello", "body": "World"], "sound": "default", "badge": 4, "mutable-content": 1]]

    // MARK: The devices entry

    @Test("the four fields are read from a devices record, absent or null ones at their defaults")
    func fields() throws {
        let table = Self.devices(#"{"authorization":"provisional","alerts":false,"sounds":null,"badges":false}"#)
        let entry = try #require(table.device(forDeviceToken: Self.token))
        #expect(entry.settings == NotificationSettings(authorization: .provisional, alerts: false, sounds: true, badges: false))
        let defaults = try #require(Self.devices(#"{"focus":"none"}"#).device(forDeviceToken: Self.token))
        #expect(defaults.settings == .defaults)
        #expect(NotificationSettings.defaults == NotificationSettings(authorization: .authorized, alerts: true, sounds: true, badges: true))
        for authorization in NotificationSettings.Authorization.allCases {
            let read = Self.devices(#"{"authorization":"\#(authorization.rawValue)"}"#).device(forDeviceToken: Self.token)
            #expect(read?.settings.authorization == authorization)
        }
    }

    @Test(
        "a wrong type or an unknown authorization makes the entry invalid: ignored, naming the field, the entry before it kept",
        arguments: [
            (#"{"authorization":"allowed"}"#, "authorization"), (#"{"authorization":true}"#, "authorization"),
            (#"{"alerts":"off"}"#, "alerts"), (#"{"sounds":0}"#, "sounds"), (#"{"badges":[]}"#, "badges"),
            (#"{"authorization":"Denied"}"#, "authorization"),
        ])
    func invalidFields(_ value: String, _ field: String) throws {
        let table = Self.devices(#"{"authorization":"denied"}"#)
        guard case .invalid(let reason) = table.apply(key: RecordBytes(Self.token), value: RecordBytes(value)) else {
            Issue.record("\(value) was taken")
            return
        }
        #expect(reason.hasPrefix(field), "\(reason)")
        #expect(table.device(forDeviceToken: Self.token)?.settings.authorization == .denied)
    }

    // MARK: Gating rules 3a and 3b

    @Test("3a: denied or notDetermined → original, not-authorized, extension null", arguments: ["denied", "notDetermined"])
    func notAuthorized(_ authorization: String) async throws {
        let result = try await Self.dispatch(Self.full, entry: #"{"authorization":"\#(authorization)"}"#)
        #expect(result.disposition == .original)
        #expect(result.reason == .notAuthorized)
        #expect(result.extensionName == nil)
        #expect(try result.deliveryValue()["extension"] == .null)
    }

    @Test("3b: alerts false → original, alerts-off (also under provisional); 3a comes first")
    func alertsOff() async throws {
        for entry in [#"{"alerts":false}"#, #"{"authorization":"provisional","alerts":false}"#] {
            let result = try await Self.dispatch(Self.full, entry: entry)
            #expect(result.disposition == .original, "\(entry)")
            #expect(result.reason == .alertsOff, "\(entry)")
        }
        let both = try await Self.dispatch(Self.full, entry: #"{"authorization":"denied","alerts":false}"#)
        #expect(both.reason == .notAuthorized)
    }

    @Test("3a and 3b come after rule 3 and before rule 4: no alert text is no-alert, not mutable is still gated out by the settings")
    func order() async throws {
        let badgeOnly = try await Self.dispatch(["aps": ["badge": 1, "mutable-content": 1]], entry: #"{"authorization":"denied"}"#)
        #expect(badgeOnly.reason == .noAlert)
        let notMutable = try await Self.dispatch(["aps": ["alert": "Hi"]], entry: #"{"alerts":false}"#)
        #expect(notMutable.reason == .alertsOff)
        let authorized = try await Self.dispatch(["aps": ["alert": "Hi"]], entry: #"{"authorization":"authorized"}"#)
        #expect(authorized.reason == .notMutable)
    }

    @Test("provisional, sounds off and badges off let the extension run")
    func extensionRuns() async throws {
        for entry in [#"{"authorization":"provisional"}"#, #"{"sounds":false,"badges":false}"#, "{}"] {
            let result = try await Self.dispatch(Self.full, entry: entry)
            #expect(result.disposition == .modified, "\(entry)")
            #expect(result.reason == .extension, "\(entry)")
        }
    }

    @Test("the filtering entitlement never applies under 3a and 3b: no extension runs")
    func noFiltering() async throws {
        let yaml = Fixture.appYAML(
            """
                entitlements: [filtering]
                serviceExtension: {kind: rewrite, remove: [aps.alert]}
            """)
        for (entry, reason) in [(#"{"authorization":"denied"}"#, DeliveryReason.notAuthorized), (#"{"alerts":false}"#, .alertsOff)] {
            let result = try await Self.dispatch(Self.full, entry: entry, yaml: yaml)
            #expect(result.disposition == .original)
            #expect(result.reason == reason)
        }
        let authorized = try await Self.dispatch(Self.full, entry: nil, yaml: yaml)
        #expect(authorized.reason == .extensionFiltered)
    }

    // MARK: The table's rows

    /// One row of section 20's table, in one app state, with what the delivery must say.
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let entry: String?
        let payload: JSONValue
        let state: String
        let userAlert: JSONValue
        let badgeEffect: BadgeEffect
        let launch: String?
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "denied: userAlert null, badge unchanged, no launch by opening", entry: #"{"authorization":"denied"}"#,
            payload: full, state: "notRunning", userAlert: .null, badgeEffect: .unchanged, launch: nil),
        Row(name: "notDetermined: the same, force-quit too", entry: #"{"authorization":"notDetermined"}"#,
            payload: full, state: "forceQuit", userAlert: .null, badgeEffect: .unchanged, launch: nil),
        Row(name: "denied: userAlert null whichever rule decided (no-alert, a sound only)", entry: #"{"authorization":"denied"}"#,
            payload: ["aps": ["sound": "default"]], state: "background", userAlert: .null, badgeEffect: .unchanged, launch: nil),
        Row(name: "provisional: quiet (no banner, no sound), list, badge unchanged, launch as section 6",
            entry: #"{"authorization":"provisional"}"#, payload: full, state: "notRunning",
            userAlert: alert(banner: false, list: true, sound: false), badgeEffect: .unchanged, launch: "userOpensNotification"),
        Row(name: "provisional in the foreground: list as 17.2 (options), no banner", entry: #"{"authorization":"provisional"}"#,
            payload: full, state: "foreground",
            userAlert: alert(banner: false, list: true, sound: false, options: ["banner", "list", "sound", "badge"]),
            badgeEffect: .unchanged, launch: nil),
        Row(name: "alerts off: no banner or list, the sound as 17.2, the badge as 17.2, no launch", entry: #"{"alerts":false}"#,
            payload: full, state: "notRunning", userAlert: alert(banner: false, list: false, sound: true), badgeEffect: .set, launch: nil),
        Row(name: "alerts off, sounds off: no sound either", entry: #"{"alerts":false,"sounds":false}"#,
            payload: full, state: "background", userAlert: alert(banner: false, list: false, sound: false), badgeEffect: .set, launch: nil),
        Row(name: "alerts off, badges off: the badge unchanged", entry: #"{"alerts":false,"badges":false}"#,
            payload: full, state: "forceQuit", userAlert: alert(banner: false, list: false, sound: true), badgeEffect: .unchanged, launch: nil),
        Row(name: "authorized, sounds off: sound false, the rest as 17.2", entry: #"{"sounds":false}"#,
            payload: full, state: "notRunning", userAlert: alert(banner: true, list: true, sound: false), badgeEffect: .set,
            launch: "userOpensNotification"),
        Row(name: "authorized, badges off: badge unchanged (a 0 too)", entry: #"{"badges":false}"#,
            payload: ["aps": ["alert": "Hi", "badge": 0]], state: "background", userAlert: alert(banner: true, list: true, sound: false),
            badgeEffect: .unchanged, launch: nil),
        Row(name: "authorized, every switch on: as 17.2", entry: #"{"authorization":"authorized","alerts":true,"sounds":true,"badges":true}"#,
            payload: full, state: "notRunning", userAlert: alert(banner: true, list: true, sound: true), badgeEffect: .set,
            launch: "userOpensNotification"),
        Row(name: "no devices entry: the defaults", entry: nil, payload: full, state: "notRunning",
            userAlert: alert(banner: true, list: true, sound: true), badgeEffect: .set, launch: "userOpensNotification"),
    ]

    /// A `userAlert` of the fixture's app (no entitlements, no Focus) with these values.
    static func alert(banner: Bool, list: Bool, sound: Bool, options: [JSONValue]? = nil) -> JSONValue {
        [
            "interruptionLevel": "active", "focus": "off",
            "willPresent": options == nil ? .null : "userNotificationCenter(_:willPresent:withCompletionHandler:)",
            "options": options.map(JSONValue.array) ?? .null, "banner": .bool(banner), "list": .bool(list), "sound": .bool(sound),
        ]
    }

    @Test("each row of the table: userAlert, badgeEffect and the userOpensNotification launch", arguments: rows)
    func row(_ row: Row) async throws {
        let yaml = Fixture.appYAML("    willPresent: [banner, list, sound, badge]\n" + Fixture.subtitleExtension)
        let result = try await Self.dispatch(row.payload, entry: row.entry, state: row.state, yaml: yaml)
        let delivery = try result.deliveryValue()
        #expect(delivery["userAlert"] == row.userAlert)
        #expect(delivery["badgeEffect"] == .string(row.badgeEffect.rawValue))
        #expect(try result.launchValue()?["trigger"]?.stringValue == row.launch)
        #expect(result.delivery?.launch?.rawValue == row.launch)
    }

    // MARK: What does not change

    @Test("background pushes need no authorization: the callback and the backgroundDelivery launch under every setting")
    func backgroundUnchanged() async throws {
        let silent: JSONValue = ["aps": ["content-available": 1], "sync": "now"]
        for entry in [#"{"authorization":"denied"}"#, #"{"authorization":"notDetermined"}"#, #"{"alerts":false,"badges":false}"#] {
            let result = try await Self.dispatch(silent, entry: entry, state: "notRunning", pushType: "background")
            #expect(result.reason == .pushTypeNotModifiable, "\(entry)")
            #expect(result.delivery?.appCallback == .fetchCompletionHandler, "\(entry)")
            #expect(try result.launchValue()?["trigger"] == "backgroundDelivery", "\(entry)")
        }
        // An alert push with content-available wakes the app as before: only what is shown changes.
        let both: JSONValue = ["aps": ["alert": "Hi", "content-available": 1, "badge": 2]]
        let result = try await Self.dispatch(both, entry: #"{"authorization":"denied"}"#, state: "notRunning")
        #expect(result.delivery?.appCallback == .fetchCompletionHandler)
        #expect(result.delivery?.launch == .backgroundDelivery)
        #expect(result.delivery?.userAlert == nil)
        #expect(result.delivery?.badgeEffect == .unchanged)
    }

    @Test("the legacy profile is not changed by any setting")
    func legacyUnchanged() async throws {
        let denied = #"{"authorization":"denied","alerts":false,"sounds":false,"badges":false}"#
        let legacyYAML = Fixture.appYAML(dispatch: "  profile: legacy")
        let legacy = try await Self.dispatch(["aps": ["alert": "Hi", "badge": 3]], entry: denied, state: "notRunning", yaml: legacyYAML)
        #expect(legacy.reason == .legacyProfile)
        #expect(legacy.delivery?.badgeEffect == .set)
        #expect(legacy.delivery?.launch == .userOpensNotification)
    }

    @Test("a VoIP push to a denied device keeps its PushKit callback and its relaunch")
    func voipUnchanged() async throws {
        let dispatcher = try Fixture.dispatcher("apps: {com.example.phone: {}}")
        let record = TestRecord(
            token: Self.token,
            headers: [("apns-topic", "com.example.phone.voip"), ("apns-push-type", "voip"), ("app-state", "notRunning")],
            payload: ["aps": ["alert": "Call"]]).requestRecord
        let result = await dispatcher.decide(record, tables: StateTables(devices: Self.devices(#"{"authorization":"denied"}"#)), now: Date())
        #expect(result.reason == .pushTypeNotModifiable)
        #expect(result.delivery?.appCallback == .pushKit)
        #expect(result.delivery?.launch == .backgroundDelivery)
        #expect(result.delivery?.userAlert == nil)
    }

    // MARK: Stored notifications

    @Test("a stored notification is judged by the settings of the devices record that brings the device back")
    func storedJudgedAtDelivery() async throws {
        let dispatcher = try Fixture.dispatcher(Self.yaml)
        let devices = DevicesTable()
        let tables = StateTables(appStates: NoAppStates(), devices: devices, requestRates: nil, limits: StateLimits())
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let source = TopicPartitionOffset(topic: "notifications.devices", partition: 0, offset: 0)
        // Offline and authorized: the request is stored.
        _ = dispatcher.applyDevicesRecord(
            key: RecordBytes(Self.token), value: RecordBytes(#"{"online":false}"#), devices: devices, tables: tables, source: source, now: now)
        let stored = await dispatcher.decide(
            TestRecord(token: Self.token, headers: [("apns-topic", Fixture.bundleID), ("app-state", "notRunning")], payload: Self.full).requestRecord,
            tables: tables, now: now)
        #expect(stored.outputs.map(\.kind) == [.stored])
        // Back online, with notifications denied meanwhile: delivered as not-authorized.
        let outcome = dispatcher.applyDevicesRecord(
            key: RecordBytes(Self.token), value: RecordBytes(#"{"authorization":"denied"}"#), devices: devices, tables: tables,
            source: source, now: now.addingTimeInterval(60))
        #expect(outcome.steps.count == 1)
        guard case .decided(let delivered) = try #require(outcome.steps.first) else {
            Issue.record("the stored notification was not decided at once")
            return
        }
        #expect(delivered.reason == .notAuthorized)
        #expect(delivered.delivery?.userAlert == nil)
        #expect(delivered.delivery?.launch == nil)
        #expect(delivered.outputs.map(\.kind) == [.delivery, .stored])
    }
}
