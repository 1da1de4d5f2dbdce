import Dispatcher
import DispatcherTools
import Foundation
import JSON
import Notifications
import Records
import TestSupport
import Testing

/// The state the rules of sections 14 to 16 keep (StateTables' channels, activities, stored and
/// budgets): replaying the records the rules write restores the same tables; an ActivityCommand
/// survives its record; malformed records are typed errors; the limits of dispatch.stateLimits.
@Suite("Live Activity, broadcast and store-and-forward state")
struct ActivityStateTests {
    static let config = """
        dispatch: {stateLimits: {activities: 3, stored: 5}}
        apps:
          com.example.app: {entitlements: [broadcast], liveActivityBudget: 2}
          com.example.other: {}
        """

    static func token(_ byte: UInt8) -> String { TestRecord.token(byte) }

    /// Lines that start, update, end and broadcast to activities, store notifications for an
    /// offline device and bring it back: every kind of change the rules make.
    static var lines: [String] {
        let start = { (byte: UInt8, id: Int, channel: String) in
            #"{"key":"\#(token(byte))","headers":{"apns-topic":"com.example.app.push-type.liveactivity","apns-push-type":"liveactivity","apns-id":"d0000000-0000-4000-8000-00000000000\#(id)"},"value":{"aps":{"event":"start","timestamp":10,"attributes-type":"T","attributes":{"a":1},"content-state":{"s":0},"alert":"go","relevance-score":2.50,"input-push-channel":"\#(channel)"}},"timestamp":1800000000000}"#
        }
        let first = ActivityCommand.startToken(deviceToken: token(0xC1), apnsID: MessageID("d0000000-0000-4000-8000-000000000001")!)
        let device = token(0xD1)
        return [
            #"{"topic":"notifications.channels","key":"Y2g=","value":{"bundleId":"com.example.app"}}"#,
            start(0xC1, 1, "Y2g="), start(0xC2, 2, "Y2g="),
            #"{"key":"\#(first)","headers":{"apns-topic":"com.example.app.push-type.liveactivity","apns-push-type":"liveactivity"},"value":{"aps":{"event":"update","timestamp":11,"content-state":{"s":1},"stale-date":1800000500}},"timestamp":1800000001000}"#,
            #"{"headers":{"apns-channel-id":"Y2g=","apns-topic":"com.example.app","apns-push-type":"liveactivity"},"value":{"aps":{"event":"end","timestamp":20,"dismissal-date":5}},"timestamp":1800000002000}"#,
            #"{"topic":"notifications.devices","key":"\#(device)","value":{"online":false}}"#,
            #"{"key":"\#(device)","headers":[["apns-topic","com.example.app"],["x","1"],["x","2"]],"value":{"aps":{"alert":"one","badge":1.0}},"timestamp":1800000003000}"#,
            #"{"key":"\#(device)","headers":{"apns-topic":"com.example.other","apns-expiration":"1800000100"},"value":{"aps":{"alert":"two"},"n":12345678901234567890},"timestamp":1800000004000}"#,
            #"{"key":"\#(device)","headers":{"apns-topic":"com.example.app"},"value":{"aps":{"alert":"three"}},"timestamp":1800000005000}"#,
            start(0xC3, 3, "Y2g="), start(0xC4, 4, "Y2g="), start(0xC5, 5, "Y2g="), start(0xC6, 6, "Y2g="),
        ]
    }

    /// Runs `lines` offline, returning the dispatch and every output record in order.
    static func run(_ lines: [String], config: String = config) async throws -> (JSONLinesDispatch, [OutputRecord]) {
        let offline = JSONLinesDispatch(dispatcher: try Fixture.dispatcher(config))
        var outputs: [OutputRecord] = []
        for (offset, line) in lines.enumerated() {
            if case .dispatched(let result) = await offline.process(Array(line.utf8), offset: offset) { outputs += result.outputs }
        }
        return (offline, outputs)
    }

    @Test("replaying the activities and stored records the rules wrote restores the same tables")
    func replayRestores() async throws {
        let (offline, outputs) = try await Self.run(Self.lines)
        #expect(offline.activities.count == 3)
        #expect(offline.stored.count == 2)
        let activities = ActivitiesTable()
        let stored = StoredNotifications()
        for output in outputs {
            switch output.kind {
            case .activity:
                if case .invalid(let reason) = activities.apply(key: output.key, value: output.value) { Issue.record("\(reason)") }
            case .stored:
                if case .invalid(let reason) = stored.apply(key: output.key, value: output.value) { Issue.record("\(reason)") }
            default: break
            }
        }
        #expect(activities.entries == offline.activities.entries)
        // The evicted activities' tombstones removed them from the replayed table too.
        for (byte, id) in [(0xC1, 1), (0xC2, 2)] as [(UInt8, Int)] {
            let evicted = ActivityCommand.startToken(deviceToken: Self.token(byte), apnsID: MessageID("d0000000-0000-4000-8000-00000000000\(id)")!)
            #expect(activities.entry(forActivityToken: evicted) == nil)
        }
        #expect(activities.subscribers(ofChannel: "Y2g=", bundleID: "com.example.app") == offline.activities.subscribers(ofChannel: "Y2g=", bundleID: "com.example.app"))
        let device = Self.token(0xD1)
        #expect(stored.keys(forDeviceToken: device) == offline.stored.keys(forDeviceToken: device))
        #expect(stored.keys(forDeviceToken: device) == ["\(device)/com.example.other", "\(device)/com.example.app"])
        for key in stored.keys(forDeviceToken: device) {
            let replayed = try #require(stored.notification(forKey: key))
            let original = try #require(offline.stored.notification(forKey: key))
            #expect(replayed.bytes == original.bytes)
        }
        // Numbers keep their written form through the stored record (section 2).
        let otherBytes = stored.notification(forKey: "\(device)/com.example.other").map(\.bytes) ?? []
        let otherText = String(decoding: otherBytes, as: UTF8.self)
        #expect(otherText.contains("12345678901234567890"))
    }

    @Test("coming back online takes every stored notification of the token out of the table, in stored order; tombstones replay to an empty table")
    func comingOnlineEmptiesTable() async throws {
        let device = Self.token(0xD1)
        let (offline, outputs) = try await Self.run(
            Self.lines + [#"{"topic":"notifications.devices","key":"\#(device)","value":{"online":true},"timestamp":1800000200000}"#])
        #expect(offline.stored.count == 0)
        let stored = StoredNotifications()
        for output in outputs where output.kind == .stored { stored.apply(key: output.key, value: output.value) }
        #expect(stored.count == 0)
        let deliveries = outputs.filter { $0.kind == .delivery }.suffix(2).compactMap { try? JSONValue(parsing: $0.value ?? []) }
        // The one stored first expired (its apns-expiration passed); the other is delivered.
        #expect(deliveries.map { $0[path: ["reason"]] } == ["expired", "not-mutable"])
    }

    @Test("the limits: usage counts evictions and refusals, for the worker's metrics")
    func usage() async throws {
        let (offline, _) = try await Self.run(Self.lines)
        let activities = offline.activities.usage
        #expect(activities.limit == 3)
        #expect(activities.count == 3)
        #expect(activities.isFull)
        #expect(activities.evicted == 2)
        #expect(activities.refused == 1)
        #expect(offline.stored.usage == StateUsage(count: 2, limit: 5, evicted: 0, refused: 0))
    }

    @Test("an ActivityCommand survives its record: key, value and headers carry everything")
    func commandRoundTrip() throws {
        let dispatcher = try Fixture.dispatcher(Self.config)
        let tables = StateTables(appStates: NoAppStates(), devices: NoDevices(), requestRates: nil, limits: StateLimits())
        let record = TestRecord(
            token: Self.token(0xC5).uppercased(),
            headers: [
                ("apns-topic", "com.example.app.push-type.liveactivity"), ("apns-push-type", "liveactivity"),
                ("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), ("dispatcher-note", "the provider's"),
            ],
            value: Array(#"{"aps": {"event": "start", "timestamp": 1, "attributes-type": "T", "attributes": {}, "content-state": {}, "alert": "go"}}"#.utf8),
            offset: 7).requestRecord
        guard case .activity(let work) = dispatcher.prepare(record, tables: tables, now: Date(timeIntervalSince1970: 1_800_000_000.25)) else {
            Issue.record("a liveactivity request prepares a command")
            return
        }
        let command = try #require(work.commands.first)
        #expect(command.kind == .request)
        #expect(command.event == .start)
        let output = command.record(topic: "dispatcher.activity-commands")
        #expect(output.kind == .command)
        #expect(output.partition == nil)
        #expect(output.key == RecordBytes(command.activityToken))
        #expect(output.value == record.value)
        let parsed = try ActivityCommand(
            parsing: RequestRecord(
                key: output.key, headers: output.headers, value: output.value,
                source: TopicPartitionOffset(topic: "dispatcher.activity-commands", partition: 3, offset: 9)))
        #expect(parsed.activityToken == command.activityToken)
        #expect(parsed.deviceToken == Self.token(0xC5))
        #expect(parsed.key == record.key)
        #expect(parsed.headers == record.headers)
        #expect(parsed.value == record.value)
        #expect(parsed.source == record.source)
        #expect(parsed.receivedAt == command.receivedAt)
        #expect(parsed.apnsID == command.apnsID)
        #expect(parsed.priority == .immediate)
        #expect(parsed.appState == command.appState)
        #expect(parsed.isExpired == false)
        // Executed where it was parsed, it decides what it would have decided at once.
        let now = Date(timeIntervalSince1970: 1_800_000_001)
        let direct = dispatcher.execute(command, tables: StateTables(appStates: NoAppStates(), devices: NoDevices(), requestRates: nil, limits: StateLimits()), now: now)
        let forwarded = dispatcher.execute(parsed, tables: tables, now: now)
        #expect(forwarded.outputs == direct.outputs)
        #expect(forwarded.outputs.map(\.kind) == [.delivery, .activity])
        #expect(tables.activities?.entry(forActivityToken: command.activityToken)?.status == .active)
    }

    @Test("a broadcast's commands: one per subscriber, ascending, each a broadcast command with the channel")
    func broadcastCommands() async throws {
        let (offline, _) = try await Self.run(Array(Self.lines.prefix(3)))
        let dispatcher = offline.dispatcher
        let record = TestRecord(
            token: nil,
            headers: [("apns-channel-id", "Y2g="), ("apns-topic", "com.example.app"), ("apns-push-type", "liveactivity")],
            payload: ["aps": ["event": "update", "timestamp": 30, "content-state": [:]]]).requestRecord
        guard case .activity(let work) = dispatcher.prepare(record, tables: offline.tables, now: Date(timeIntervalSince1970: 1_800_000_000)) else {
            Issue.record("a valid broadcast with subscribers prepares commands")
            return
        }
        let tokens = offline.activities.subscribers(ofChannel: "Y2g=", bundleID: "com.example.app")
        #expect(tokens.count == 2)
        #expect(work.commands.map(\.activityToken) == tokens)
        #expect(tokens == tokens.sorted())
        for command in work.commands {
            #expect(command.kind == .broadcast)
            #expect(command.channelID == "Y2g=")
            #expect(command.deviceToken == nil)
            let parsed = try ActivityCommand(parsing: RequestRecord(
                key: command.record(topic: "t").key, headers: command.record(topic: "t").headers, value: command.record(topic: "t").value,
                source: TopicPartitionOffset(topic: "t", partition: 0, offset: 0)))
            #expect(parsed.channelID == "Y2g=")
            #expect(parsed.kind == .broadcast)
            #expect(parsed.key == nil)
        }
    }

    @Test(
        "a malformed command record is a typed error naming what is wrong, never a crash",
        arguments: [
            ("key", "the key is not an activity token"),
            ("no-count", "dispatcher-request-headers is missing"),
            ("count", "does not give the number of headers"),
            ("kind", "dispatcher-command is not request or broadcast"),
            ("order", "comes before dispatcher-request-headers"),
            ("apns-id", "dispatcher-apns-id is not a UUID"),
            ("priority", "dispatcher-priority is not 10 or 5"),
            ("value", "the value is not a valid liveactivity payload"),
            ("empty", "the value (the request's payload) is empty"),
            ("repeat", "is repeated"),
            ("null-header", "has no value"),
            ("channel", "dispatcher-channel-id must be given for a broadcast"),
        ])
    func malformedCommand(_ damage: String, _ message: String) throws {
        let dispatcher = try Fixture.dispatcher(Self.config)
        let record = TestRecord(
            token: Self.token(0xC6),
            headers: [("apns-topic", "com.example.app.push-type.liveactivity"), ("apns-push-type", "liveactivity")],
            payload: ["aps": ["event": "update", "timestamp": 2, "content-state": [:]]]).requestRecord
        guard case .activity(let work) = dispatcher.prepare(record, tables: StateTables(), now: Date()), let command = work.commands.first else {
            Issue.record("a liveactivity request prepares a command")
            return
        }
        let output = command.record(topic: "t")
        var key = output.key
        var headers = output.headers
        var value = output.value
        func replace(_ name: String, _ text: String?) {
            headers = headers.map { $0.name == name ? RecordHeader(name: name, value: text.map { Array($0.utf8) }) : $0 }
        }
        switch damage {
        case "key": key = RecordBytes("short")
        case "no-count": headers = headers.filter { $0.name.hasPrefix("dispatcher-") && $0.name != "dispatcher-request-headers" }
        case "count": replace("dispatcher-request-headers", "5")
        case "kind": replace("dispatcher-command", "start")
        case "order": headers.insert(RecordHeader(name: "apns-topic", value: "x"), at: 0)
        case "apns-id": replace("dispatcher-apns-id", "not-a-uuid")
        case "priority": replace("dispatcher-priority", "1")
        case "value": value = RecordBytes(#"{"aps":{"event":"later"}}"#)
        case "empty": value = nil
        case "repeat": headers.insert(RecordHeader(name: "dispatcher-priority", value: "5"), at: 1)
        case "null-header": replace("dispatcher-bundle-id", nil)
        case "channel": headers.insert(RecordHeader(name: "dispatcher-channel-id", value: "Y2g="), at: 1)
        default: Issue.record("unknown damage \(damage)")
        }
        #expect {
            try ActivityCommand(parsing: RequestRecord(key: key, headers: headers, value: value, source: TopicPartitionOffset(topic: "t", partition: 0, offset: 0)))
        } throws: { error in
            (error as? ActivityCommandError)?.message.contains(message) == true
        }
    }

    @Test("table records: malformed entries are ignored with a reason; null values delete; keys are normalised")
    func tableRecords() throws {
        let activities = ActivitiesTable()
        let token = Self.token(0xAA)
        #expect(activities.apply(key: RecordBytes("short"), value: RecordBytes("{}")) == .invalid(reason: "the key is not an activity token (64 to 200 hexadecimal characters, even length)"))
        for (value, reason) in [
            ("[]", "the value is not a JSON object"), (#"{"status":"active","timestamp":1}"#, "bundleId is missing or not a string"),
            (#"{"bundleId":"b","status":"active","timestamp":1.5}"#, "timestamp is missing or not an integer of seconds"),
            (#"{"bundleId":"b","status":"active","timestamp":1,"attributes":[]}"#, "attributes is not an object"),
            (#"{"bundleId":"b","status":"active","timestamp":1,"staleDate":"soon"}"#, "staleDate is not an integer of seconds"),
        ] {
            #expect(activities.apply(key: RecordBytes(token), value: RecordBytes(value)) == .invalid(reason: reason), "\(value)")
        }
        let update = activities.apply(key: RecordBytes(token.uppercased()), value: RecordBytes(#"{"bundleId":"b","status":"ended","timestamp":1,"dismissalDate":null,"channelId":"c"}"#))
        guard case .set(let normalised, let entry) = update else {
            Issue.record("a valid entry is set")
            return
        }
        #expect(normalised == token)
        #expect(entry.channelID == "c")
        #expect(entry.state(at: 0) == .ended)
        #expect(activities.subscribers(ofChannel: "c", bundleID: "b") == [token])
        #expect(activities.apply(key: RecordBytes(token), value: nil) == .deleted(activityToken: token))
        #expect(activities.subscribers(ofChannel: "c", bundleID: "b").isEmpty)

        let channels = ChannelsTable()
        #expect(channels.apply(key: RecordBytes("Y2g="), value: RecordBytes(#"{"storagePolicy":1}"#)) == .invalid(reason: "bundleId is missing or not a string"))
        #expect(channels.apply(key: RecordBytes("Y2g="), value: RecordBytes(#"{"bundleId":"b","storagePolicy":2}"#)) == .invalid(reason: "storagePolicy is not 0 or 1"))
        #expect(channels.apply(key: RecordBytes("Y2g="), value: RecordBytes(#"{"bundleId":"b","storagePolicy":0}"#)) == .set(channelID: "Y2g=", entry: ChannelEntry(bundleID: "b", storagePolicy: 0)))
        #expect(channels.hasChannel("Y2g=", bundleID: "b"))
        #expect(!channels.hasChannel("Y2g=", bundleID: "c"))
        #expect(channels.apply(key: RecordBytes("Y2g="), value: nil) == .deleted(channelID: "Y2g="))

        let stored = StoredNotifications()
        guard case .invalid = stored.apply(key: RecordBytes("\(token)"), value: RecordBytes("{}")) else {
            Issue.record("a key without a bundle ID is refused")
            return
        }
        guard case .invalid(let reason) = stored.apply(key: RecordBytes("\(token)/b"), value: RecordBytes(#"{"apnsId":"aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}"#)) else {
            Issue.record("an incomplete value is refused")
            return
        }
        #expect(reason == "deviceToken is missing or not a string")
        guard case .invalid(let notUUID) = stored.apply(key: RecordBytes("\(token)/b"), value: RecordBytes(#"{"apnsId":"x"}"#)) else {
            Issue.record("an apnsId that is not a UUID is refused")
            return
        }
        #expect(notUUID == "apnsId is not a UUID")
    }

    @Test("the activity's state at a time (section 14.4): dismissed, ended, stale, active")
    func activityState() {
        var entry = ActivityEntry(bundleID: "b", status: .active, timestamp: 1)
        #expect(entry.state(at: 100) == .active)
        entry.staleDate = 100
        #expect(entry.state(at: 99) == .active)
        #expect(entry.state(at: 100) == .stale)
        entry.status = .ended
        entry.dismissalDate = 200
        #expect(entry.state(at: 199) == .ended)
        #expect(entry.state(at: 200) == .dismissed)
    }

    @Test("dispatch.stateLimits: defaults of 1,000,000, the file's values, the environment's over them; the tables take them")
    func stateLimitsConfiguration() throws {
        #expect(try Configuration(yaml: "").dispatch.stateLimits == StateLimits(activities: 1_000_000, stored: 1_000_000))
        let file = try Configuration(yaml: "dispatch: {stateLimits: {activities: 7}}")
        #expect(file.dispatch.stateLimits == StateLimits(activities: 7, stored: 1_000_000))
        let environment = try Configuration(
            yaml: "dispatch: {stateLimits: {activities: 7}}",
            environment: ["NOTIFICATION_DISPATCHER_DISPATCH_STATE_LIMITS_STORED": "9", "NOTIFICATION_DISPATCHER_DISPATCH_STATE_LIMITS_ACTIVITIES": "8"])
        #expect(environment.dispatch.stateLimits == StateLimits(activities: 8, stored: 9))
        let tables = StateTables(appStates: NoAppStates(), devices: NoDevices(), requestRates: nil, limits: environment.dispatch.stateLimits)
        #expect(tables.activities?.limit == 8)
        #expect(tables.stored?.limit == 9)
        #expect(throws: ConfigurationError.self) { try Configuration(yaml: "dispatch: {stateLimits: {activities: -1}}") }
    }
}
