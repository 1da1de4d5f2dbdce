import Dispatcher
import Foundation
import JSON
import Notifications
import Records
import Testing
import TestSupport

/// SEMANTICS section 5: the output records, exactly, and the expiry check that comes first.
@Suite("Output records (section 5)")
struct OutputRecordTests {
    private let receivedAt = Date(timeIntervalSince1970: 1_800_000_000.250)
    private let fixedNow = Date(timeIntervalSince1970: 1_800_000_001.5)

    private func dispatcher(_ yaml: String = "apps: {com.example.app: {}}") throws -> Dispatcher {
        let now = fixedNow
        return try Dispatcher(
            configuration: Configuration(yaml: yaml), registry: ExtensionRegistry(), now: { now })
    }

    @Test("a delivery record: topic, key, headers and every field of the value in order")
    func deliveryRecord() async throws {
        let record = TestRecord(
            token: TestRecord.token(0xAB).uppercased(),
            headers: [
                ("APNS-TOPIC", Fixture.bundleID), ("apns-id", "0A1B2C3D-0000-4000-8000-00000000000E"),
                ("apns-collapse-id", "score"), ("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
                ("app-state", "foreground"),
            ],
            value: Array(#"{"aps":{"alert":"Goal","badge":1},"big":123456789012345678901234567890,"f":1.50}"#.utf8)).requestRecord
        let result = try await dispatcher().dispatch(record, appStates: NoAppStates(), receivedAt: receivedAt)
        let output = try #require(result.outputs.first)
        #expect(result.outputs.count == 1)
        #expect(output.kind == .delivery)
        #expect(output.topic == "notifications.deliveries")
        #expect(output.key == RecordBytes(TestRecord.token(0xAB)))
        #expect(
            output.headers == [
                RecordHeader(name: "apns-id", value: "0a1b2c3d-0000-4000-8000-00000000000e"),
                RecordHeader(name: "traceparent", value: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
            ])
        let text = String(decoding: output.value ?? [], as: UTF8.self)
        #expect(
            text == """
                {"apnsId":"0a1b2c3d-0000-4000-8000-00000000000e","deviceToken":"\(TestRecord.token(0xAB))",\
                "bundleId":"com.example.app","pushType":"alert","priority":10,"collapseId":"score",\
                "disposition":"original","reason":"not-mutable",\
                "payload":{"aps":{"alert":"Goal","badge":1},"big":123456789012345678901234567890,"f":1.50},\
                "attachments":[],"extension":null,"presentation":null,"badgeEffect":"unchanged","badgeCount":null,"appState":"foreground",\
                "appCallback":"application(_:didReceiveRemoteNotification:fetchCompletionHandler:)",\
                "liveActivity":null,"channelId":null,"widgetReload":null,\
                "userAlert":{"interruptionLevel":"active","focus":"off","willPresent":null,"options":[],"banner":false,"list":false,"sound":false},\
                "receivedAt":"2027-01-15T08:00:00.250Z","deliveredAt":"2027-01-15T08:00:00.250Z"}
                """)
    }

    @Test("a launch record follows its delivery, with the same key and headers")
    func launchRecord() async throws {
        let record = TestRecord(
            headers: [("apns-topic", Fixture.bundleID), ("app-state", "notRunning")], payload: ["aps": ["alert": "Hi"]]).requestRecord
        let result = try await dispatcher().dispatch(record, appStates: NoAppStates(), receivedAt: receivedAt)
        #expect(result.outputs.map(\.kind) == [.delivery, .launch])
        let launch = result.outputs[1]
        #expect(launch.topic == "notifications.launches")
        #expect(launch.key == result.outputs[0].key)
        #expect(launch.headers == result.outputs[0].headers)
        let apnsID = MessageID.derived(for: record.source)
        #expect(
            String(decoding: launch.value ?? [], as: UTF8.self) == """
                {"apnsId":"\(apnsID)","deviceToken":"\(TestRecord.token())","bundleId":"com.example.app",\
                "trigger":"userOpensNotification","launchOptions":{"remoteNotification":{"aps":{"alert":"Hi"}}}}
                """)
    }

    @Test("a dead letter keeps key, value and headers, adds the derived apns-id and the dlq headers; dlq-failed-at is the record's now")
    func deadLetter() async throws {
        let value = Array(#"{"aps": {"alert": 5}}"#.utf8)
        let record = TestRecord(token: "XYZ", value: value, topic: "requests-in", partition: 3, offset: 42).requestRecord
        let result = try await dispatcher("kafka: {groupId: team-a}\napps: {com.example.app: {}}")
            .dispatch(record, appStates: NoAppStates(), receivedAt: receivedAt)
        // BadDeviceToken: a feedback record follows (section 12.2).
        #expect(result.outputs.map(\.kind) == [.deadLetter, .feedback])
        let output = result.outputs[0]
        #expect(output.kind == .deadLetter)
        #expect(output.topic == "notifications.dead-letter")
        #expect(output.key == RecordBytes("XYZ"))
        #expect(output.value == RecordBytes(value))
        #expect(result.rejectionReason == .badDeviceToken)
        let names = output.headers.map(\.name)
        #expect(
            names == [
                "apns-topic", "apns-id", "dlq-reason", "dlq-status", "dlq-detail", "dlq-source-topic",
                "dlq-source-partition", "dlq-source-offset", "dlq-consumer-group", "dlq-failed-at",
            ])
        #expect(result.header("apns-id") == MessageID.derived(for: record.source).description)
        #expect(result.header("dlq-reason") == "BadDeviceToken")
        #expect(result.header("dlq-status") == "400")
        #expect(result.header("dlq-detail")?.contains("XYZ") == true)
        #expect(result.header("dlq-source-topic") == "requests-in")
        #expect(result.header("dlq-source-partition") == "3")
        #expect(result.header("dlq-source-offset") == "42")
        #expect(result.header("dlq-consumer-group") == "team-a")
        #expect(result.header("dlq-failed-at") == "2027-01-15T08:00:00.250Z")
    }

    @Test("a dead letter of a request with its own apns-id keeps it and adds none; the default group is notification-dispatcher")
    func deadLetterWithMessageID() async throws {
        let record = TestRecord(
            headers: [("apns-topic", Fixture.bundleID), ("Apns-Id", "not-a-uuid")], payload: ["aps": ["alert": "Hi"]]).requestRecord
        let result = try await dispatcher().dispatch(record, appStates: NoAppStates(), receivedAt: receivedAt)
        #expect(result.rejectionReason == .badMessageId)
        #expect(result.outputs[0].headers.filter { $0.name.lowercased() == "apns-id" }.count == 1)
        #expect(result.header("Apns-Id") == "not-a-uuid")
        #expect(result.header("dlq-consumer-group") == "notification-dispatcher")
    }

    @Test("expired: discarded before gating, original payload, no extension, no launch")
    func expired() async throws {
        let yaml = Fixture.appYAML(Fixture.subtitleExtension)
        let dispatcher = try Fixture.dispatcher(yaml)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let record = TestRecord(
            headers: [("apns-topic", Fixture.bundleID), ("apns-expiration", "1799999999"), ("app-state", "notRunning")],
            payload: Fixture.mutableAlert(category: "NEWS")).requestRecord
        let result = await dispatcher.dispatch(record, appStates: NoAppStates(), receivedAt: now)
        #expect(result.disposition == .discarded)
        #expect(result.reason == .expired)
        #expect(result.outputs.count == 1)
        let value = try result.deliveryValue()
        #expect(value["payload"] == Fixture.mutableAlert(category: "NEWS"))
        #expect(value["extension"] == .null)
        #expect(value["presentation"] == .null)
        #expect(value["badgeEffect"] == "unchanged")
        #expect(value["appCallback"] == .null)
        #expect(value["attachments"] == [])
    }

    @Test("not expired: an expiration of 0, the current second, or later is delivered", arguments: ["0", "1800000000", "1800000100"])
    func notExpired(expiration: String) async throws {
        let dispatcher = try Fixture.dispatcher(Fixture.appYAML(Fixture.subtitleExtension))
        let record = TestRecord(
            headers: [("apns-topic", Fixture.bundleID), ("apns-expiration", expiration)], payload: Fixture.mutableAlert()).requestRecord
        let result = await dispatcher.dispatch(
            record, appStates: NoAppStates(), receivedAt: Date(timeIntervalSince1970: 1_800_000_000.9))
        #expect(result.reason == .extension)
    }

    @Test("topics come from the configuration")
    func configuredTopics() async throws {
        let yaml = """
            topics: {deliveries: out.d, launches: out.l, deadLetter: out.dlq}
            apps: {com.example.app: {}}
            """
        let dispatcher = try dispatcher(yaml)
        let delivered = await dispatcher.dispatch(
            TestRecord(payload: ["aps": ["alert": "Hi"]]).requestRecord, appStates: NoAppStates(), receivedAt: receivedAt)
        #expect(delivered.outputs.map(\.topic) == ["out.d", "out.l"])
        let rejected = await dispatcher.dispatch(
            TestRecord(token: nil, payload: ["aps": ["alert": "Hi"]]).requestRecord, appStates: NoAppStates(), receivedAt: receivedAt)
        #expect(rejected.outputs.map(\.topic) == ["out.dlq"])
        #expect(rejected.outputs[0].key == nil)
    }
}
