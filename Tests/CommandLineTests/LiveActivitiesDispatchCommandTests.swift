import Dispatcher
import Foundation
import JSON
import Notifications
import Records
import TestSupport
import Testing

/// SEMANTICS sections 14, 15 and 16 (and their rows of 11.2, 11.4 and 19) through the built binary:
/// the `dispatch` command on the samples of `Config/samples/` and on lines of its own.
@Suite("dispatch command: Live Activities, broadcast, store and forward (built binary)")
struct LiveActivitiesDispatchCommandTests {
    typealias Tool = TokensAndUserAlertDispatchCommandTests

    /// The activity the first line of live-activities.jsonl starts: SHA-256 of `<key>/<apns-id>`.
    static let match = "3e5eb71688dc99744cd31eb7aa8e7a1fe6e83dfcbaf64d0a977549b18305aadd"
    /// The activities broadcast.jsonl starts, in ascending token order.
    static let subscribers = [
        "123c0be2e525d09bc7038073fe79bb29ca755c79c6d17923391fc4e664e8f271",
        "e66b674638ad0a5bd445f7a0d34968d556c6e0b4bb089b2baf474d956c2ab8b4",
    ]
    static let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    /// One output line in short: what decides it, with a Live Activity's result and state.
    static func summary(_ record: JSONObject) -> String {
        let value = record["value"]?.objectValue
        switch record["topic"]?.stringValue {
        case "notifications.deliveries":
            var text = "delivery \(value?["disposition"]?.stringValue ?? "?") \(value?["reason"]?.stringValue ?? "?")"
            if let activity = value?["liveActivity"]?.objectValue {
                text += " \(activity["result"]?.stringValue ?? "?")/\(activity["state"]?.stringValue ?? "null")"
            }
            return text
        case "notifications.activities":
            return value.map { "activity \($0["status"]?.stringValue ?? "?")" } ?? "activity tombstone"
        case "notifications.stored":
            return value == nil ? "stored tombstone" : "stored"
        default:
            return Tool.summary(record)
        }
    }

    // MARK: Section 14

    @Test("live-activities.jsonl: every row of 14.3, the budget of 14.5 (priority 5 never counted), dismissal (14.4), loc objects, and an activities record after each change")
    func liveActivitiesSample() async throws {
        let run = try await Tool.sample("live-activities.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.map(Self.summary) == [
                "delivery original push-type-not-modifiable started/active", "activity active",
                "delivery original push-type-not-modifiable updated/active", "activity active",
                "delivery original push-type-not-modifiable stale-ignored/active",
                "delivery original push-type-not-modifiable updated/active", "activity active",
                "delivery original push-type-not-modifiable throttled/active",
                "delivery original push-type-not-modifiable updated/active", "activity active",
                "delivery original push-type-not-modifiable ended/dismissed", "activity ended",
                "delivery original push-type-not-modifiable ended-ignored/dismissed",
                "delivery original push-type-not-modifiable no-activity/null",
                "delivery original push-type-not-modifiable malformed/null",
                "delivery original push-type-not-modifiable channel-unknown/null",
                "dead-letter BadPriority 400",
                "delivery original push-type-not-modifiable malformed/dismissed",
                "delivery original push-type-not-modifiable started/active", "activity active",
            ])
        let lines = run.stdout.split(separator: "\n").map(String.init)
        // The start: the delivery's liveActivity, then the new entry with every field present (14.6).
        #expect(
            lines[0]
                == #"{"topic":"notifications.deliveries","key":"e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1","headers":{"apns-id":"a1000000-0000-4000-8000-000000000001"},"value":{"apnsId":"a1000000-0000-4000-8000-000000000001","deviceToken":"e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1","bundleId":"com.example.sports","pushType":"liveactivity","priority":10,"collapseId":null,"disposition":"original","reason":"push-type-not-modifiable","payload":{"aps":{"event":"start","timestamp":1800000000,"attributes-type":"MatchAttributes","attributes":{"home":"Lyon","away":"Nantes"},"content-state":{"score":"0-0"},"alert":{"title":"Kick-off","body":"Lyon v Nantes"},"stale-date":1800007200,"relevance-score":0.5}},"attachments":[],"extension":null,"presentation":null,"badgeEffect":"unchanged","badgeCount":null,"appState":"notRunning","appCallback":null,"liveActivity":{"activityToken":"3e5eb71688dc99744cd31eb7aa8e7a1fe6e83dfcbaf64d0a977549b18305aadd","event":"start","result":"started","state":"active","alerted":true},"channelId":null,"widgetReload":null,"userAlert":null,"receivedAt":"2027-01-15T08:00:00.000Z","deliveredAt":"2027-01-15T08:00:00.000Z"}}"#
        )
        #expect(
            lines[1]
                == #"{"topic":"notifications.activities","key":"3e5eb71688dc99744cd31eb7aa8e7a1fe6e83dfcbaf64d0a977549b18305aadd","headers":{"apns-id":"a1000000-0000-4000-8000-000000000001"},"value":{"bundleId":"com.example.sports","status":"active","timestamp":1800000000,"attributesType":"MatchAttributes","attributes":{"home":"Lyon","away":"Nantes"},"contentState":{"score":"0-0"},"staleDate":1800007200,"dismissalDate":null,"relevanceScore":0.5,"channelId":null}}"#
        )
        // An update replaces contentState, staleDate and relevanceScore (absent: null).
        #expect(records[3]["value"]?[path: ["staleDate"]] == .null)
        #expect(records[3]["value"]?[path: ["relevanceScore"]] == .null)
        #expect(records[3]["value"]?[path: ["contentState"]] == ["score": "1-0"])
        #expect(records[2]["value"]?[path: ["liveActivity", "alerted"]] == false)
        // The end: dismissal-date in the past is kept (min with now + 4 h), so it is dismissed at once.
        #expect(records[11]["value"]?[path: ["status"]] == "ended")
        #expect(records[11]["value"]?[path: ["dismissalDate"]] == 1_799_999_999)
        #expect(records[10]["value"]?[path: ["liveActivity", "alerted"]] == true)
        #expect(records[10]["value"]?[path: ["priority"]] == 5)
        // The priority-1 dead letter keeps the request as it was.
        #expect(records[16]["key"] == .string(String(repeating: "e2", count: 32)))
        // A start of another app (health), with a loc-object alert: its own token.
        #expect(records[18]["value"]?[path: ["liveActivity", "activityToken"]] == "9721d40a2f8d8daa40d21149e4b58e85e7aa821350fd83b436d887e8cf486f13")
        #expect(records[19]["value"]?[path: ["bundleId"]] == "com.example.health")
    }

    @Test("an update or end addresses the activity of its own app only (14.2); stale by timestamp; ended ignores later pushes; a stale-date in the past makes the state stale")
    func addressingAndState() async throws {
        let key = Tool.token("e5")
        let topic = "com.example.sports.push-type.liveactivity"
        let start = ActivityCommand.startToken(deviceToken: key, apnsID: MessageID("a5000000-0000-4000-8000-000000000001")!)
        func line(_ key: String, _ id: Int, _ aps: String, topic: String = topic, extra: String = "") -> String {
            #"{"key":"\#(key)","headers":{"apns-topic":"\#(topic)","apns-push-type":"liveactivity","apns-id":"a5000000-0000-4000-8000-00000000000\#(id)"\#(extra)},"value":{"aps":\#(aps)},"timestamp":1800000000000}"#
        }
        let run = try await Tool.dispatch(
            "apps: {com.example.sports: {}, com.example.health: {}}",
            [
                line(key, 1, #"{"event":"start","timestamp":100,"attributes-type":"T","attributes":{},"content-state":{},"alert":"go","stale-date":1700000000}"#),
                line(start.uppercased(), 2, #"{"event":"update","timestamp":200,"content-state":{}}"#, topic: "com.example.health.push-type.liveactivity"),
                line(start.uppercased(), 3, #"{"event":"end","timestamp":50}"#),
                line(start, 4, #"{"event":"end","timestamp":300}"#),
                line(start, 5, #"{"timestamp":400}"#),
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.map(Self.summary) == [
                "delivery original push-type-not-modifiable started/stale", "activity active",
                "delivery original push-type-not-modifiable no-activity/null",
                "delivery original push-type-not-modifiable stale-ignored/stale",
                "delivery original push-type-not-modifiable ended/ended", "activity ended",
                "delivery original push-type-not-modifiable malformed/ended",
            ])
        // The request's key is normalised to lowercase: the activity token.
        #expect(records[3]["value"]?[path: ["liveActivity", "activityToken"]] == .string(start))
        // No dismissal-date: E + 14400.
        #expect(records[5]["value"]?[path: ["dismissalDate"]] == .number(JSONNumber(1_800_000_000 + 14_400)))
        #expect(records[4]["value"]?[path: ["liveActivity", "event"]] == "end")
        #expect(records[6]["value"]?[path: ["liveActivity", "event"]] == .null)
    }

    @Test("an expired Live Activity push is discarded, expired, with liveActivity null and no activities record; the legacy profile has no Live Activities")
    func expiredAndLegacy() async throws {
        let key = Tool.token("e6")
        let start = #"{"key":"\#(key)","headers":{"apns-topic":"com.example.app.push-type.liveactivity","apns-push-type":"liveactivity"EXTRA},"value":{"aps":{"event":"start","timestamp":1,"attributes-type":"T","attributes":{},"content-state":{},"alert":"go"}},"timestamp":1800000000000}"#
        let expired = try await Tool.dispatch("apps: {com.example.app: {}}", [start.replacingOccurrences(of: "EXTRA", with: #","apns-expiration":"1700000000""#)])
        let records = try expired.records()
        #expect(records.map(Self.summary) == ["delivery discarded expired"])
        #expect(records[0]["value"]?[path: ["liveActivity"]] == .null)
        let legacy = try await Tool.dispatch("dispatch: {profile: legacy}", [start.replacingOccurrences(of: "EXTRA", with: "")])
        let legacyRecords = try legacy.records()
        // Section 8: every push type follows the alert rows there, so the alert launches a notRunning app.
        #expect(legacyRecords.map(Self.summary) == ["delivery original legacy-profile", "launch userOpensNotification"])
        #expect(legacyRecords[0]["value"]?[path: ["liveActivity"]] == .null)
    }

    @Test("activities lines update the table for the lines after them (11.2): an update to an activity started elsewhere; a malformed entry is reported and ignored")
    func activitiesTopic() async throws {
        let token = Tool.token("a7")
        let run = try await Tool.dispatch(
            "apps: {com.example.app: {}}",
            [
                #"{"topic":"notifications.activities","key":"\#(token)","value":{"bundleId":"com.example.app","status":"active","timestamp":10,"channelId":null}}"#,
                #"{"topic":"notifications.activities","key":"\#(token)","value":{"bundleId":"com.example.app","status":"paused","timestamp":10}}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.example.app.push-type.liveactivity","apns-push-type":"liveactivity","apns-priority":"5"},"value":{"aps":{"event":"update","timestamp":11,"content-state":{"n":1},"relevance-score":1.50}},"timestamp":1800000000000}"#,
                #"{"topic":"notifications.activities","key":"\#(token)","value":null}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.example.app.push-type.liveactivity","apns-push-type":"liveactivity"},"value":{"aps":{"event":"update","timestamp":12,"content-state":{}}},"timestamp":1800000000000}"#,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("line 2: activities record ignored: status is missing or not active or ended"))
        let records = try run.records()
        #expect(
            records.map(Self.summary) == [
                "delivery original push-type-not-modifiable updated/active", "activity active",
                "delivery original push-type-not-modifiable no-activity/null",
            ])
        // Numbers keep their written form in the entry.
        #expect(run.stdout.contains(#""relevanceScore":1.50"#))
    }

    // MARK: Section 15

    @Test("broadcast.jsonl: checks in order with their reasons, fan-out in ascending token order with activities records, expired broadcasts, no subscriber no output")
    func broadcastSample() async throws {
        let run = try await Tool.sample("broadcast.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.map(Self.summary) == [
                "delivery original push-type-not-modifiable started/active", "activity active",
                "delivery original push-type-not-modifiable started/active", "activity active",
                "delivery original push-type-not-modifiable updated/active", "activity active",
                "delivery original push-type-not-modifiable updated/active", "activity active",
                "dead-letter ChannelNotRegistered 400", "dead-letter FeatureNotEnabled 400", "dead-letter TopicDisallowed 400",
                "dead-letter MissingPushType 400", "dead-letter BadChannelId 400", "dead-letter MissingChannelId 400",
                "dead-letter InvalidPayload 400",
                "delivery discarded expired", "delivery discarded expired",
                "delivery original push-type-not-modifiable ended/ended", "activity ended",
                "delivery original push-type-not-modifiable ended/ended", "activity ended",
            ])
        // The fan-out: keyed by each activity token, ascending, the broadcast's identifier and channel.
        for (index, token) in [(4, Self.subscribers[0]), (6, Self.subscribers[1])] {
            #expect(records[index]["key"] == .string(token))
            #expect(records[index]["value"]?[path: ["deviceToken"]] == .string(token))
            #expect(records[index]["value"]?[path: ["apnsId"]] == "b2000000-0000-4000-8000-000000000001")
            #expect(records[index]["value"]?[path: ["channelId"]] == "c3BvcnRzLTE=")
            #expect(records[index]["value"]?[path: ["collapseId"]] == .null)
            #expect(records[index]["headers"] == ["apns-id": "b2000000-0000-4000-8000-000000000001"])
            #expect(records[index + 1]["key"] == .string(token))
        }
        #expect(records[1]["value"]?[path: ["channelId"]] == "c3BvcnRzLTE=")
        // Loc objects are allowed in a broadcast's alert; the alert counts for `alerted`.
        #expect(records[4]["value"]?[path: ["liveActivity", "alerted"]] == true)
        // Dead letters: key as it was (none), the broadcast's identifier added as apns-id.
        #expect(records[8]["key"] == .null)
        #expect(records[8]["headers"]?[path: ["apns-id"]] == "b2000000-0000-4000-8000-000000000002")
        #expect(records[8]["headers"]?[path: ["apns-request-id"]] == "b2000000-0000-4000-8000-000000000002")
        // Expired: discarded with channelId, liveActivity null.
        #expect(records[15]["value"]?[path: ["channelId"]] == "c3BvcnRzLTE=")
        #expect(records[15]["value"]?[path: ["liveActivity"]] == .null)
        // traceparent is copied to every output of the broadcast.
        #expect(records[17]["headers"] == ["apns-id": "b2000000-0000-4000-8000-000000000010", "traceparent": .string(Self.traceparent)])
        #expect(records[18]["headers"]?[path: ["traceparent"]] == .string(Self.traceparent))
        #expect(records[17]["value"]?[path: ["priority"]] == 5)
    }

    @Test("broadcast checks 1 to 6 in order (DuplicateHeaders first; apns-id ignored; push type case; priority 1; the 5120-byte limit; the legacy profile is FeatureNotEnabled)")
    func broadcastChecks() async throws {
        let channel = "Y2hhbm5lbA=="
        func line(_ headers: String, value: String = #"{"aps":{"event":"update","timestamp":1,"content-state":{}}}"#) -> String {
            #"{"headers":\#(headers),"value":\#(value),"timestamp":1800000000000}"#
        }
        let big = String(repeating: "x", count: 5_100)
        let config = "apps: {com.example.app: {entitlements: [broadcast]}}"
        let run = try await Tool.dispatch(
            config,
            [
                line(#"[["apns-channel-id","\#(channel)"],["APNS-CHANNEL-ID","\#(channel)"]]"#),
                line(#"{"apns-channel-id":"\#(channel)","apns-push-type":"liveactivity"}"#),
                line(#"{"apns-channel-id":"\#(channel)","apns-topic":"com.example.other","apns-push-type":"liveactivity"}"#),
                line(#"{"apns-channel-id":"\#(channel)","apns-topic":"com.example.app","apns-push-type":"alert"}"#),
                line(#"{"apns-channel-id":"\#(String(repeating: "QUFB", count: 17))","apns-topic":"com.example.app","apns-push-type":"LiveActivity"}"#),
                line(#"{"apns-channel-id":"\#(channel)","apns-topic":"com.example.app","apns-push-type":"Liveactivity","apns-request-id":"nope"}"#),
                line(#"{"apns-channel-id":"\#(channel)","apns-topic":"com.example.app","apns-push-type":"liveactivity","apns-priority":"1"}"#),
                line(#"{"apns-channel-id":"\#(channel)","apns-topic":"com.example.app","apns-push-type":"liveactivity","apns-expiration":"soon"}"#),
                #"{"headers":{"apns-channel-id":"\#(channel)","apns-topic":"com.example.app","apns-push-type":"liveactivity"},"timestamp":1800000000000}"#,
                line(#"{"apns-channel-id":"\#(channel)","apns-topic":"com.example.app","apns-push-type":"liveactivity"}"#, value: #"{"aps":{"event":"update"},"pad":"\#(big)"}"#),
                line(#"{"apns-channel-id":"\#(channel)","apns-topic":"com.example.app","apns-push-type":"liveactivity"}"#, value: #"{"aps":{"event":"pause"}}"#),
                line(#"{"apns-channel-id":"\#(channel)","apns-topic":"com.example.app","apns-push-type":"liveactivity","apns-id":"bad","app-state":"nope","apns-collapse-id":"\#(String(repeating: "c", count: 80))"}"#),
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.map(Self.summary) == [
                "dead-letter DuplicateHeaders 400", "dead-letter MissingTopic 400", "dead-letter TopicDisallowed 400",
                "dead-letter InvalidPushType 400", "dead-letter BadChannelId 400", "dead-letter BadMessageId 400",
                "dead-letter BadPriority 400", "dead-letter BadExpirationDate 400", "dead-letter PayloadEmpty 400",
                "dead-letter PayloadTooLarge 413", "dead-letter InvalidPayload 400", "dead-letter ChannelNotRegistered 400",
            ])
        // Without apns-request-id, the derived identifier is the broadcast's apns-id; a given apns-request-id is added as given.
        #expect(records[1]["headers"]?[path: ["apns-id"]] == .string(MessageID.derived(for: TopicPartitionOffset(topic: "notifications.requests", partition: 0, offset: 1)).description))
        #expect(records[5]["headers"]?[path: ["apns-id"]] == "nope")
        // A given apns-id stays as it was (headers unchanged), nothing added.
        #expect(run.stdout.split(separator: "\n").last?.contains(#""apns-id":"bad","app-state""#) == true)
        let legacy = try await Tool.dispatch(
            "dispatch: {profile: legacy}",
            [line(#"{"apns-channel-id":"\#(channel)"}"#), line(#"[["apns-channel-id","a"],["apns-channel-id","b"]]"#)])
        #expect(try legacy.records().map(Self.summary) == ["dead-letter FeatureNotEnabled 400", "dead-letter DuplicateHeaders 400"])
    }

    @Test("a broadcast ignores the devices table and the 429 count; its subscribers each have their own budget")
    func broadcastBudgets() async throws {
        let channel = "YnVkZ2V0"
        let tokens = [Tool.token("b8"), Tool.token("b9")]
        var lines = [#"{"topic":"notifications.channels","key":"\#(channel)","value":{"bundleId":"com.example.app"}}"#]
        for token in tokens {
            lines.append(#"{"topic":"notifications.activities","key":"\#(token)","value":{"bundleId":"com.example.app","status":"active","timestamp":1,"channelId":"\#(channel)"}}"#)
            lines.append(#"{"topic":"notifications.devices","key":"\#(token)","value":{"online":false,"token":"unregistered","since":1}}"#)
        }
        // A device's request to the first activity is refused by its devices entry; broadcasts ignore it.
        lines.append(#"{"key":"\#(tokens[0])","headers":{"apns-topic":"com.example.app.push-type.liveactivity","apns-push-type":"liveactivity"},"value":{"aps":{"event":"update","timestamp":2,"content-state":{}}},"timestamp":1800000000000}"#)
        for timestamp in [3, 4] {
            lines.append(#"{"key":"any","headers":{"apns-channel-id":"\#(channel)","apns-topic":"com.example.app","apns-push-type":"liveactivity"},"value":{"aps":{"event":"update","timestamp":\#(timestamp),"content-state":{}}},"timestamp":1800000001000}"#)
        }
        let run = try await Tool.dispatch(
            "dispatch: {tooManyRequests: {limit: 1, window: 1h}}\napps: {com.example.app: {entitlements: [broadcast], liveActivityBudget: 1}}", lines)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            try run.records().map(Self.summary) == [
                "dead-letter Unregistered 410", "feedback Unregistered",
                "delivery original push-type-not-modifiable updated/active", "activity active",
                "delivery original push-type-not-modifiable updated/active", "activity active",
                "delivery original push-type-not-modifiable throttled/active",
                "delivery original push-type-not-modifiable throttled/active",
            ])
    }

    // MARK: Section 16

    @Test("store-and-forward.jsonl: not-stored, collapsed, superseded, the stored record, coming back online in stored order with tombstones, expired on return")
    func storeAndForwardSample() async throws {
        let run = try await Tool.sample("store-and-forward.jsonl")
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.map(Self.summary) == [
                "stored",
                "delivery discarded not-stored",
                "delivery discarded collapsed", "stored",
                "delivery discarded superseded", "stored",
                "stored",
                "delivery original not-mutable", "stored tombstone",
                "delivery original not-mutable", "launch userOpensNotification", "stored tombstone",
                "stored",
                "delivery discarded expired", "stored tombstone",
            ])
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let token = String(repeating: "f1", count: 32)
        // The stored record of 16.2, headers as received (a repeated one as a repeated key).
        #expect(
            lines[6]
                == #"{"topic":"notifications.stored","key":"\#(token)/com.example.chat","headers":{"apns-id":"c1000000-0000-4000-8000-000000000005","traceparent":"\#(Self.traceparent)"},"value":{"apnsId":"c1000000-0000-4000-8000-000000000005","deviceToken":"\#(token)","bundleId":"com.example.chat","topic":"com.example.chat","pushType":"alert","priority":10,"collapseId":null,"expiration":null,"expiresAt":1802592005000,"receivedAt":"2027-01-15T08:00:05.000Z","headers":{"apns-topic":"com.example.chat","apns-id":"c1000000-0000-4000-8000-000000000005","traceparent":"\#(Self.traceparent)","x-note":"a","x-note":"b"},"payload":{"aps":{"alert":"New message","category":"MESSAGE"}}}}"#
        )
        // expiresAt: the expiration when earlier than receivedAt + storagePeriod.
        #expect(records[5]["value"]?[path: ["expiresAt"]] == 1_800_003_600_000)
        #expect(records[5]["value"]?[path: ["expiration"]] == 1_800_003_600)
        // The replaced notification's delivery: its own apns-id and receivedAt; deliveredAt now.
        #expect(records[2]["headers"] == ["apns-id": "c1000000-0000-4000-8000-000000000001"])
        #expect(records[2]["value"]?[path: ["receivedAt"]] == "2027-01-15T08:00:01.000Z")
        #expect(records[2]["value"]?[path: ["deliveredAt"]] == "2027-01-15T08:00:03.000Z")
        #expect(records[2]["value"]?[path: ["collapseId"]] == "score")
        // Coming back online: receivedAt the original, deliveredAt the devices record's now, the
        // sections of delivery run as if now (a badge sets it; the chat app launches).
        #expect(records[7]["value"]?[path: ["receivedAt"]] == "2027-01-15T08:00:04.000Z")
        #expect(records[7]["value"]?[path: ["deliveredAt"]] == "2027-01-15T08:01:00.000Z")
        #expect(records[7]["value"]?[path: ["badgeEffect"]] == "set")
        #expect(lines[8] == #"{"topic":"notifications.stored","key":"\#(token)/com.example.news","headers":{"apns-id":"c1000000-0000-4000-8000-000000000004"},"value":null}"#)
        #expect(records[11]["headers"]?[path: ["traceparent"]] == .string(Self.traceparent))
        #expect(records[13]["value"]?[path: ["deliveredAt"]] == "2027-01-15T08:03:00.000Z")
    }

    @Test("coming back online runs the service extension as if now; a stored Live Activity push starts its activity then; the stored limit refuses a new key with ServiceUnavailable 503")
    func comingOnlineAndLimits() async throws {
        let token = Tool.token("f2")
        let config = """
            dispatch: {stateLimits: {stored: 1}}
            apps:
              com.example.app:
                serviceExtension: {kind: rewrite, set: {aps.alert.subtitle: stored}}
              com.example.other: {}
            """
        let run = try await Tool.dispatch(
            config,
            [
                #"{"topic":"notifications.devices","key":"\#(token)","value":{"online":false}}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.example.app.push-type.liveactivity","apns-push-type":"liveactivity","apns-id":"f2000000-0000-4000-8000-000000000001"},"value":{"aps":{"event":"start","timestamp":5,"attributes-type":"T","attributes":{},"content-state":{},"alert":"go"}},"timestamp":1800000000000}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.example.other"},"value":{"aps":{"alert":"no room"}},"timestamp":1800000001000}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.example.app","apns-id":"f2000000-0000-4000-8000-000000000003"},"value":{"aps":{"alert":{"title":"t"},"mutable-content":1}},"timestamp":1800000002000}"#,
                #"{"topic":"notifications.devices","key":"\#(token)","value":{"online":true}}"#,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.map(Self.summary) == [
                "stored",
                "dead-letter ServiceUnavailable 503",
                "delivery discarded superseded", "stored",
                "delivery modified extension", "launch userOpensNotification", "stored tombstone",
            ])
        #expect(records[1]["headers"]?[path: ["dlq-detail"]]?.stringValue?.contains("dispatch.stateLimits.stored") == true)
        #expect(records[4]["value"]?[path: ["payload", "aps", "alert", "subtitle"]] == "stored")

        let live = try await Tool.dispatch(
            "apps: {com.example.app: {}}",
            [
                #"{"topic":"notifications.devices","key":"\#(token)","value":{"online":false}}"#,
                #"{"key":"\#(token)","headers":{"apns-topic":"com.example.app.push-type.liveactivity","apns-push-type":"liveactivity","apns-id":"f2000000-0000-4000-8000-000000000001"},"value":{"aps":{"event":"start","timestamp":5,"attributes-type":"T","attributes":{},"content-state":{},"alert":"go"}},"timestamp":1800000000000}"#,
                #"{"topic":"notifications.devices","key":"\#(token)","value":{"online":true},"timestamp":1800000005000}"#,
            ])
        #expect(
            try live.records().map(Self.summary) == [
                "stored", "delivery original push-type-not-modifiable started/active", "activity active", "stored tombstone",
            ])
    }

    @Test("the activities limit: a start drops the earliest dismissed activity (its tombstone follows), else it is ServiceUnavailable 503")
    func activitiesLimit() async throws {
        func start(_ byte: String, _ id: Int, at time: Int) -> String {
            #"{"key":"\#(Tool.token(byte))","headers":{"apns-topic":"com.example.app.push-type.liveactivity","apns-push-type":"liveactivity","apns-id":"a9000000-0000-4000-8000-00000000000\#(id)"},"value":{"aps":{"event":"start","timestamp":1,"attributes-type":"T","attributes":{},"content-state":{},"alert":"go"}},"timestamp":\#(time)}"#
        }
        let first = ActivityCommand.startToken(deviceToken: Tool.token("c1"), apnsID: MessageID("a9000000-0000-4000-8000-000000000001")!)
        let run = try await Tool.dispatch(
            "dispatch: {stateLimits: {activities: 1}}\napps: {com.example.app: {}}",
            [
                start("c1", 1, at: 1_800_000_000_000),
                start("c2", 2, at: 1_800_000_000_000),
                #"{"key":"\#(first)","headers":{"apns-topic":"com.example.app.push-type.liveactivity","apns-push-type":"liveactivity"},"value":{"aps":{"event":"end","timestamp":2,"dismissal-date":1}},"timestamp":1800000000000}"#,
                start("c3", 3, at: 1_800_000_001_000),
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.map(Self.summary) == [
                "delivery original push-type-not-modifiable started/active", "activity active",
                "dead-letter ServiceUnavailable 503",
                "delivery original push-type-not-modifiable ended/dismissed", "activity ended",
                "delivery original push-type-not-modifiable started/active", "activity active", "activity tombstone",
            ])
        #expect(records[2]["headers"]?[path: ["dlq-detail"]]?.stringValue?.contains("dispatch.stateLimits.activities") == true)
        #expect(records[7]["key"] == .string(first))
    }

    @Test("a malformed dispatch.stateLimits stops dispatch with the key path (exit 2)")
    func malformedLimits() async throws {
        for (yaml, path) in [
            ("dispatch: {stateLimits: {activities: 0}}", "dispatch.stateLimits.activities"),
            ("dispatch: {stateLimits: {stored: many}}", "dispatch.stateLimits.stored"),
            ("dispatch: {stateLimits: {other: 1}}", "dispatch.stateLimits.other"),
            ("dispatch: {stateLimits: 5}", "dispatch.stateLimits"),
        ] {
            let run = try await Tool.dispatch(yaml, [])
            #expect(run.status == 2, "\(yaml)")
            #expect(run.stderr.contains(path), "\(yaml): \(run.stderr)")
        }
    }

    // MARK: explain and lint

    /// `explain --json` of line `line` of the sample `name`.
    static func explain(_ name: String, line: Int) async throws -> JSONValue {
        let run = try await BuiltBinary.run([
            "explain", "--json", "--config", Tool.path("Config/dispatcher.yaml"), "--line", "\(line)", Tool.path("Config/samples/\(name)"),
        ])
        try #require(run.status == 0, "\(run.standardError)")
        return try JSONValue(parsing: Array(run.standardOutput.utf8))
    }

    @Test("explain names each new rule with its citation: the Live Activity row, the broadcast's checks and fan-out, store and forward, a broadcast dead letter")
    func explainNamesRules() async throws {
        let end = try await Self.explain("live-activities.jsonl", line: 7)
        let steps = try #require(end[path: ["steps"]]?.arrayValue)
        #expect(steps.compactMap { $0[path: ["step"]]?.stringValue }.last == "live-activity")
        #expect(steps.last?[path: ["facts", "result"]] == "ended")
        #expect(steps.last?[path: ["facts", "row"]] == 9)
        let attributions = steps.last?[path: ["citations"]]?.arrayValue?.compactMap { $0[path: ["attribution"]]?.stringValue } ?? []
        #expect(attributions == ["SEMANTICS.md §14.2", "SEMANTICS.md §14.3", "SEMANTICS.md §14.3", "SEMANTICS.md §14.4", "SEMANTICS.md §14.6"])
        #expect(end[path: ["outcome", "liveActivity"]] == "ended")

        let throttled = try await Self.explain("live-activities.jsonl", line: 5)
        #expect(throttled[path: ["steps"]]?.arrayValue?.last?[path: ["citations"]]?.arrayValue?.contains { $0[path: ["attribution"]] == "SEMANTICS.md §14.5" } == true)

        let broadcast = try await Self.explain("broadcast.jsonl", line: 4)
        #expect(broadcast[path: ["steps"]]?.arrayValue?.compactMap { $0[path: ["step"]]?.stringValue } == ["validation", "broadcast"])
        #expect(broadcast[path: ["outcome", "kind"]] == "broadcast")
        #expect(broadcast[path: ["outcome", "results"]] == ["updated", "updated"])
        #expect(broadcast[path: ["outputs"]]?.arrayValue?.count == 4)

        let refused = try await Self.explain("broadcast.jsonl", line: 6)
        let validation = try #require(refused[path: ["steps"]]?.arrayValue?.first)
        #expect(validation[path: ["facts", "failedCheck"]] == "entitlement")
        #expect(validation[path: ["facts", "reason"]] == "FeatureNotEnabled")
        #expect(validation[path: ["citations"]]?.arrayValue?.first?[path: ["text"]] == "The app's entitlements lack broadcast (an app not configured has none): FeatureNotEnabled.")

        let collapsed = try await Self.explain("store-and-forward.jsonl", line: 4)
        #expect(collapsed[path: ["steps"]]?.arrayValue?.compactMap { $0[path: ["step"]]?.stringValue } == ["validation", "store-and-forward"])
        #expect(collapsed[path: ["outcome", "replaced"]] == "collapsed")
        let notStored = try await Self.explain("store-and-forward.jsonl", line: 3)
        #expect(notStored[path: ["steps"]]?.arrayValue?.contains { $0[path: ["step"]] == "store-and-forward" } == true)
        #expect(notStored[path: ["outcome", "reason"]] == "not-stored")
    }

    @Test("lint warns about Live Activity mistakes: dates in milliseconds, a stale-date past, an incomplete start, a channel without the broadcast entitlement, a dismissal-date before the end")
    func lint() async throws {
        let key = Tool.token("e7")
        func line(_ topic: String, _ aps: String) -> String {
            #"{"key":"\#(key)","headers":{"apns-topic":"\#(topic).push-type.liveactivity","apns-push-type":"liveactivity"},"value":{"aps":\#(aps)},"timestamp":1800000000000}"#
        }
        let run = try await BuiltBinary.run(
            ["dispatch", "--lint", "--config", Tool.path("Config/dispatcher.yaml")],
            input: [
                line("com.example.sports", #"{"event":"update","timestamp":1800000000000,"content-state":{}}"#),
                line("com.example.sports", #"{"event":"update","timestamp":1,"content-state":{},"stale-date":1700000000,"dismissal-date":1800000001}"#),
                line("com.example.health", #"{"event":"start","timestamp":1,"attributes":{},"alert":"go","input-push-channel":"Y2g="}"#),
                line("com.example.sports", #"{"event":"end","timestamp":2,"dismissal-date":1700000000}"#),
            ].joined(separator: "\n"))
        #expect(run.status == 0, "\(run.standardError)")
        let warnings = run.standardError.split(separator: "\n").map { line in
            line.split(separator: " ").prefix(6).joined(separator: " ")
        }
        #expect(
            warnings == [
                "notification-dispatcher dispatch: line 1: lint live-activity-date-in-milliseconds:",
                "notification-dispatcher dispatch: line 2: lint stale-date-in-past:",
                "notification-dispatcher dispatch: line 2: lint dismissal-date-ignored:",
                "notification-dispatcher dispatch: line 3: lint live-activity-start-incomplete:",
                "notification-dispatcher dispatch: line 3: lint channel-without-broadcast:",
            ])
    }
}
