import Dispatcher
import DispatcherService
import DispatcherTools
import Foundation
import Kafka
import Notifications
import Records

/// The input of `bench soak`: Live Activities started by push-to-start, updated by
/// their tokens and by broadcasts on channels, a third of them ended, and notifications stored for
/// offline devices that come back online at the end. Generated from a seed, so that a run can be
/// repeated; the same records go to the broker and, as JSON lines, to one offline `dispatch` run.
///
/// Every event of an activity carries a timestamp of its own (updates, broadcasts and ends never
/// share one), so its final state does not depend on the order in which a group of workers
/// executes them: the event with the highest timestamp wins wherever it runs, as in `dispatch`.
struct SoakWorkload: Sendable {
    /// One input record.
    struct Input: Sendable {
        var topic: String
        var key: String
        var headers: [RecordHeader]
        var value: String

        /// The record for the broker.
        var record: ProducerRecord {
            ProducerRecord(topic: topic, key: Array(key.utf8), value: Array(value.utf8), headers: headers)
        }

        /// The JSON line `dispatch` reads (the requests topic unless `topic` says otherwise).
        func line(requestsTopic: String) -> String {
            var fields: [String] = []
            if topic != requestsTopic { fields.append(#""topic":"\#(topic)""#) }
            fields.append(#""key":"\#(key)""#)
            if !headers.isEmpty {
                let pairs = headers.map { #""\#($0.name)":"\#($0.value.map { String(decoding: $0, as: UTF8.self) } ?? "")""# }
                fields.append(#""headers":{"# + pairs.joined(separator: ",") + "}")
            }
            fields.append(#""value":"# + value)
            return "{" + fields.joined(separator: ",") + "}"
        }

        /// The `apns-id` header, if any.
        var apnsID: String? {
            headers.first { $0.name == "apns-id" }?.value.map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// The app every request is for; it may broadcast.
    static let bundleID = "com.example.soak"
    /// The `apps` section of the workers' configuration.
    static let apps = "  \(bundleID):\n    entitlements: [broadcast]\n"
    /// Far from the wall clock: nothing goes stale or expires during a run, here or offline.
    static let base: Int64 = 1_900_000_000

    /// The channels and the offline devices: written before any worker starts.
    let setup: [Input]
    /// One push-to-start per activity; every other activity subscribes to a channel.
    let starts: [Input]
    /// Updates by activity token, broadcasts and notifications to the offline devices, in rounds.
    let middle: [Input]
    /// The ends of every third activity.
    let ends: [Input]
    /// The offline devices coming back online: their stored notifications are shown.
    let online: [Input]

    /// The activity tokens, by activity.
    let tokens: [String]
    /// The `apns-id` of every request addressed to one device or activity (starts, updates,
    /// ends): each must end with one outcome.
    let directIDs: [String]
    /// The `apns-id` of every notification stored for an offline device: each must be shown.
    let storedIDs: [String]
    /// For each broadcast (by its `apns-request-id`), the tokens of its subscribers that are
    /// never ended: each must get one delivery of it.
    let broadcastReach: [String: [String]]

    /// Generates the workload of `activities` activities.
    init(activities: Int, seed: UInt64, topics: TopicSettings) {
        var random = SeededRandom(seed: seed)
        let channels = (0..<max(1, activities / 1_000)).map { Data("soak-channel-\($0)".utf8).base64EncodedString() }
        let offline = (0..<max(1, activities / 20)).map { Self.token("dd", $0) }
        guard let devicesTopic = topics.devices else { preconditionFailure("the soak needs the devices table") }
        setup =
            channels.map { Input(topic: topics.channels, key: $0, headers: [], value: #"{"bundleId":"\#(Self.bundleID)"}"#) }
            + offline.map { Input(topic: devicesTopic, key: $0, headers: [], value: #"{"online":false}"#) }

        var subscribed: [Int: [Int]] = [:]
        var starts: [Input] = []
        var tokens: [String] = []
        for index in 0..<activities {
            let device = Self.token("aa", index)
            let id = Self.id(1, index)
            var subscription = ""
            if index.isMultiple(of: 2) {
                let channel = (index / 2) % channels.count
                subscribed[channel, default: []].append(index)
                subscription = #","input-push-channel":"\#(channels[channel])""#
            }
            starts.append(
                Self.activityPush(
                    device, id: id,
                    #"{"event":"start","timestamp":\#(Self.base),"attributes-type":"Match","attributes":{"n":\#(index)},"content-state":{"score":"0-0"},"alert":"Kick-off"\#(subscription)}"#
                ))
            tokens.append(ActivityCommand.startToken(deviceToken: device, apnsID: MessageID(id)!))
        }
        self.starts = starts
        self.tokens = tokens

        // Rounds 1 to 3: each activity gets an update in some of them (at least one in all), each
        // channel one broadcast per round; the stored notifications are spread over the rounds.
        // Timestamps: update ...3, broadcast ...5 of the round's ten, so never equal.
        let rounds = 3
        var byRound: [[Input]] = Array(repeating: [], count: rounds)
        var directIDs = starts.compactMap(\.apnsID)
        for (index, token) in tokens.enumerated() {
            let chosen = Int.random(in: 0..<rounds, using: &random)
            for round in 0..<rounds where round == chosen || Bool.random(using: &random) {
                let id = Self.id(2, round * 1_000_000 + index)
                byRound[round].append(
                    Self.activityPush(
                        token, id: id,
                        #"{"event":"update","timestamp":\#(Self.base + Int64(round * 10 + 13)),"content-state":{"score":"u\#(round)-\#(index)"}}"#))
                directIDs.append(id)
            }
        }
        var broadcastReach: [String: [String]] = [:]
        let ended = Set(stride(from: 0, to: activities, by: 3))
        for round in 0..<rounds {
            for (channelIndex, channel) in channels.enumerated() {
                let id = Self.id(3, round * 1_000 + channelIndex)
                byRound[round].append(
                    Input(
                        topic: topics.requests, key: channel,
                        headers: [
                            RecordHeader(name: "apns-topic", value: Self.bundleID), RecordHeader(name: "apns-push-type", value: "liveactivity"),
                            RecordHeader(name: "apns-channel-id", value: channel), RecordHeader(name: "apns-request-id", value: id),
                            RecordHeader(name: "apns-priority", value: "5"),
                        ],
                        value: #"{"aps":{"event":"update","timestamp":\#(Self.base + Int64(round * 10 + 15)),"content-state":{"score":"b\#(round)-c\#(channelIndex)"}}}"#
                    ))
                broadcastReach[id] = (subscribed[channelIndex] ?? []).filter { !ended.contains($0) }.map { tokens[$0] }
            }
        }
        var storedIDs: [String] = []
        for (deviceIndex, device) in offline.enumerated() {
            for copy in 0..<2 {
                let id = Self.id(4, deviceIndex * 10 + copy)
                byRound[Int.random(in: 0..<rounds, using: &random)].append(
                    Input(
                        topic: topics.requests, key: device,
                        headers: [RecordHeader(name: "apns-topic", value: Self.bundleID), RecordHeader(name: "apns-id", value: id)],
                        value: #"{"aps":{"alert":"while away \#(copy)"}}"#))
                storedIDs.append(id)
            }
        }
        middle = byRound.flatMap { $0.shuffled(using: &random) }

        let dismissal = Int64(Date().timeIntervalSince1970) + 3_600
        ends = ended.sorted().map { index in
            let id = Self.id(5, index)
            directIDs.append(id)
            return Self.activityPush(
                tokens[index], id: id,
                #"{"event":"end","timestamp":\#(Self.base + 100),"dismissal-date":\#(dismissal),"content-state":{"score":"final-\#(index)"}}"#)
        }
        online = offline.map { Input(topic: devicesTopic, key: $0, headers: [], value: #"{"online":true}"#) }
        self.directIDs = directIDs
        self.storedIDs = storedIDs
        self.broadcastReach = broadcastReach
    }

    /// Every record in the order it is sent.
    var all: [Input] { setup + starts + middle + ends + online }

    /// A 64-hex-digit device token.
    static func token(_ prefix: String, _ index: Int) -> String {
        prefix + String(format: "%062x", index)
    }

    /// A UUID-shaped `apns-id` of a kind of request.
    static func id(_ kind: Int, _ index: Int) -> String {
        String(format: "%08d-0000-4000-8000-%012d", kind, index)
    }

    /// A Live Activity request keyed by `key` (a device token for a start, else the activity's).
    static func activityPush(_ key: String, id: String, _ aps: String) -> Input {
        Input(
            topic: TopicSettings.product.requests, key: key,
            headers: [
                RecordHeader(name: "apns-topic", value: "\(bundleID).push-type.liveactivity"), RecordHeader(name: "apns-push-type", value: "liveactivity"),
                RecordHeader(name: "apns-priority", value: "5"), RecordHeader(name: "apns-id", value: id),
            ],
            value: #"{"aps":\#(aps)}"#)
    }
}
