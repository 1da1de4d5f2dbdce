import Dispatcher
import DispatcherService
import Foundation
import JSON
import Kafka
import Notifications
import Records
import TestSupport
import Testing

/// The restore of partitioned state around rebalances (docs/worker.md, "Partitioned state"), with
/// `serve` on a mock cluster of two brokers: every partition of the one-partition pipeline is led
/// by broker 1, which also coordinates the group, except the topics a test places on broker 2,
/// whose faults it controls (a broker down, an answer held back).
@Suite("partitioned state: restores after losses, evictions and failures", .serialized)
struct RestoreTests {
    /// The stored-notifications changelog.
    static let stored = "notifications.stored"
    /// The activities changelog.
    static let activities = "notifications.activities"
    /// Heartbeat, in the Kafka protocol.
    static let heartbeat: Int16 = 12
    /// ILLEGAL_GENERATION: the member's generation is over; librdkafka takes its assignment as lost.
    static let illegalGeneration: Int32 = 22

    /// Runs `body` with a one-partition pipeline on two brokers, `onSecond` led by broker 2.
    static func withPipeline(
        secondBroker onSecond: Set<String>, dispatch: String = "", _ body: (Pipeline, EmbeddedKafkaCluster) async throws -> Void
    ) async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 2, logger: Pipeline.makeLogger())
        try await Pipeline.with(on: .embedded(cluster), partitions: 1, dispatch: dispatch, apps: LiveActivitiesEndToEndTests.apps) { pipeline in
            for specification in TopicSettings.product.specifications(partitions: 1) {
                try cluster.setPartitionLeader(topic: specification.name, partition: 0, broker: onSecond.contains(specification.name) ? 2 : 1)
            }
            try cluster.setGroupCoordinator(pipeline.group, broker: 1)
            try await body(pipeline, cluster)
        }
    }

    /// A Live Activity push by `key` (a device token for a start, the activity token otherwise).
    static func activityPush(_ key: String, id: String, _ aps: String) -> ProducerRecord {
        LiveActivitiesEndToEndTests.activityPush(key, id: id, aps).record
    }

    /// A start of an activity on `device`, and the activity's token.
    static func start(on device: String, id: String) -> (record: ProducerRecord, token: String) {
        let aps = #"{"event":"start","timestamp":\#(LiveActivitiesEndToEndTests.start),"attributes-type":"Match","attributes":{"n":1},"content-state":{"score":"0-0"},"alert":"Kick-off"}"#
        return (activityPush(device, id: id, aps), ActivityCommand.startToken(deviceToken: device, apnsID: MessageID(id)!))
    }

    /// An update of the activity `token` at `LiveActivitiesEndToEndTests.start + step`.
    static func update(_ token: String, id: String, step: Int64) -> ProducerRecord {
        activityPush(token, id: id, #"{"event":"update","timestamp":\#(LiveActivitiesEndToEndTests.start + step),"content-state":{"score":"\#(step)"}}"#)
    }

    /// The end of the activity `token`.
    static func end(_ token: String, id: String) -> ProducerRecord {
        activityPush(
            token, id: id,
            #"{"event":"end","timestamp":\#(LiveActivitiesEndToEndTests.start + 100),"dismissal-date":\#(LiveActivitiesEndToEndTests.dismissal),"content-state":{"score":"final"}}"#)
    }

    /// The activities changelog's records of `token`, in order: each one's status and timestamp
    /// (`tombstone` for a deletion).
    static func changelog(of token: String, _ pipeline: Pipeline) async throws -> [String] {
        try await readToEnd(activities, on: pipeline.bootstrapServers, .readCommitted).filter {
            $0.key.map { String(decoding: $0, as: UTF8.self) } == token
        }.map { record in
            guard let state = record.value.flatMap({ try? JSONValue(parsing: $0).objectValue }) else { return "tombstone" }
            return "\(state["status"]?.stringValue ?? "?") \(state["timestamp"].map { String(decoding: $0.serialized(), as: UTF8.self) } ?? "?")"
        }
    }

    /// The Live Activity results of the deliveries of request `id`, in the order written.
    static func results(of id: String, _ pipeline: Pipeline) -> [String] {
        pipeline.outputs.records(of: Pipeline.deliveries).filter { $0.header("apns-id") == id }.map { record in
            record.json?["liveActivity"]?.objectValue?["result"]?.stringValue ?? "-"
        }
    }

    /// What a worker logged of the group and of trouble, for failure messages.
    static func groupLines(_ pipeline: Pipeline, _ names: [String]) -> String {
        names.flatMap { name in
            pipeline.log(of: name).split(separator: "\n").filter { line in
                ["assigned", "restored", "revoked", "lost", "earlier assignment", "\"warning\"", "\"error\"", "\"critical\""].contains { line.contains($0) }
            }.map { "\(name): \($0.prefix(400))" }
        }.joined(separator: "\n")
    }

    @Test("a restore that cannot complete within dispatch.restoreLimit holds the partitions: none of their records is decided or committed, and the worker stops with a critical line")
    func failedRestoreHoldsThePartitions() async throws {
        try await Self.withPipeline(secondBroker: [Self.stored], dispatch: "  restoreLimit: 3s") { pipeline, cluster in
            // Only the restore reads the stored changelog: with its broker down, every attempt fails.
            try cluster.setBrokerDown(2)
            let ids = (0..<3).map { LiveActivitiesEndToEndTests.id(7, $0) }
            for id in ids {
                let alert = ProducerRecord(
                    topic: Pipeline.requests, key: Array(LiveActivitiesEndToEndTests.token("cc", 1).utf8), value: Array(#"{"aps":{"alert":"hello"}}"#.utf8),
                    headers: [RecordHeader(name: "apns-topic", value: LiveActivitiesEndToEndTests.bundleID), RecordHeader(name: "apns-id", value: id)])
                _ = try await pipeline.producer.send(alert)
            }
            let worker = try pipeline.startWorker("w1")
            let exit = try await worker.waitForExit(limit: .seconds(120))
            let log = pipeline.log(of: "w1")
            #expect(exit.exitedNormally && exit.status != 0, "serve exits with a failure status: \(exit.status)")
            let critical = log.split(separator: "\n").filter { $0.contains(#""level":"critical""#) }
            #expect(
                critical.contains { $0.contains("could not be restored within dispatch.restoreLimit") },
                "the critical line names the restore: \(critical); \(Self.groupLines(pipeline, ["w1"]))")
            #expect(!log.contains("state restored"))
            #expect(!log.contains(#""message":"partitions assigned""#), "the assignment never took effect: \(Self.groupLines(pipeline, ["w1"]))")
            #expect(log.contains("cannot restore the state of the partitions assigned"), "each failed attempt is logged")
            // The worker is gone: whatever it wrote is in the topics now.
            for topic in Pipeline.accountingTopics + [Pipeline.launches, Self.activities] {
                let written = try await readToEnd(topic, on: pipeline.bootstrapServers, .readUncommitted)
                #expect(written.isEmpty, "\(topic): \(written.count) record(s) written for records of a partition whose state was not restored")
            }
            let committed = try await pipeline.committedOffsets()
            #expect((committed[0] ?? -1) < 0, "nothing committed: \(committed)")
        }
    }

    @Test("a loss while an end's outputs are in flight, the partition assigned again: its restore has the end once, and the end read again meets it")
    func restoreAfterALossHasTheEarlierAssignmentsChanges() async throws {
        try await Self.withPipeline(secondBroker: [Pipeline.deliveries]) { pipeline, cluster in
            try pipeline.startWorker("w1")
            try await eventually("w1 restored its partition") { pipeline.log(of: "w1").contains("state restored") }
            let device = LiveActivitiesEndToEndTests.token("aa", 1)
            let startID = LiveActivitiesEndToEndTests.id(1, 1)
            let (start, token) = Self.start(on: device, id: startID)
            _ = try await pipeline.producer.send(start)
            try await pipeline.outputs.waitForAll([startID], in: [Pipeline.deliveries], limit: .seconds(60))
            try await eventually("the start's activities record") { try await Self.changelog(of: token, pipeline).count == 1 }

            // The end's delivery goes to broker 2, which writes it and holds its answer back for
            // 20 s; the end's activities record, written once the delivery is acknowledged, waits.
            try cluster.pushRequestError(broker: 2, apiKey: 0, roundTrip: .seconds(20))
            let endID = LiveActivitiesEndToEndTests.id(5, 1)
            let end = try await pipeline.producer.send(Self.end(token, id: endID))
            try await pipeline.outputs.waitForAll([endID], in: [Pipeline.deliveries], limit: .seconds(30))
            // The worker's next heartbeat fails: its partitions are lost, and about 5 s later (the
            // mock's rebalance delay) the rejoined worker is assigned the partition again and
            // restores it, while the first end's outputs are still on their way.
            try cluster.pushRequestErrors(apiKey: Self.heartbeat, [Self.illegalGeneration])
            try await eventually("the partitions lost") { pipeline.log(of: "w1").contains("partitions lost") }
            // The end was not committed, so it is read again; once it is committed, every output of
            // both attempts is written.
            try await eventually("the end read again and committed", limit: .seconds(90)) {
                (try await pipeline.committedOffsets()[0] ?? -1) > end.offset
            }
            let changelog = try await Self.changelog(of: token, pipeline)
            let results = Self.results(of: endID, pipeline)
            let context = "changelog \(changelog), the end's results \(results); \(Self.groupLines(pipeline, ["w1"]))"
            // One end record: the first attempt's, restored and met by the replay (ended-ignored),
            // or, when the first attempt's was never written, the replay's own. Not one of each.
            #expect(changelog.filter { $0.hasPrefix("ended") }.count == 1, "one end record, not one per attempt: \(context)")
            #expect(changelog.last?.hasPrefix("ended") == true, "\(context)")
            #expect(results.count == 2 && results.allSatisfy { ["ended", "ended-ignored"].contains($0) }, "the end and its replay: \(context)")
            #expect(
                pipeline.log(of: "w1").contains("waiting for the records of the earlier assignment to end before restoring"),
                "the restore waited for the end's first attempt: \(context)")
        }
    }

    @Test("a member evicted while an update's outputs are in flight writes no changelog record once its successor restored: the activity ends at its end, not at that update")
    func evictedMemberWritesNoChangelogAfterItsSuccessor() async throws {
        try await Self.withPipeline(secondBroker: [Pipeline.deliveries]) { pipeline, cluster in
            try pipeline.startWorker("w1")
            try await eventually("w1 restored its partition") { pipeline.log(of: "w1").contains("state restored") }
            try pipeline.startWorker("w2")
            // With one partition, one member owns it: the one whose assignment after w2 joined
            // (w1's second, w2's first) names it.
            @Sendable func assignments(_ name: String) -> [Substring] {
                pipeline.log(of: name).split(separator: "\n").filter { $0.contains(#""message":"partitions assigned""#) }
            }
            try await eventually("w2 joined and both were assigned", limit: .seconds(60)) {
                assignments("w1").count >= 2 && !assignments("w2").isEmpty
            }
            let owners = ["w1", "w2"].filter { assignments($0).last?.contains("\(Pipeline.requests)[0]") == true }
            try #require(owners.count == 1, "one owner: \(Self.groupLines(pipeline, ["w1", "w2"]))")
            let owner = owners[0]
            let successor = owner == "w1" ? "w2" : "w1"
            let device = LiveActivitiesEndToEndTests.token("aa", 2)
            let startID = LiveActivitiesEndToEndTests.id(1, 2)
            let (start, token) = Self.start(on: device, id: startID)
            _ = try await pipeline.producer.send(start)
            try await pipeline.outputs.waitForAll([startID], in: [Pipeline.deliveries], limit: .seconds(60))
            try await eventually("the start's activities record") { try await Self.changelog(of: token, pipeline).count == 1 }

            // The update's delivery is written and its answer held back for 40 s: its activities
            // record waits for it. Meanwhile its worker stops answering (as on a starved machine),
            // the group evicts it (after the 6 s session) and the successor restores the partition
            // (5 s later) without the update.
            try cluster.pushRequestError(broker: 2, apiKey: 0, roundTrip: .seconds(40))
            let updateID = LiveActivitiesEndToEndTests.id(2, 1)
            _ = try await pipeline.producer.send(Self.update(token, id: updateID, step: 10))
            try await pipeline.outputs.waitForAll([updateID], in: [Pipeline.deliveries], limit: .seconds(30))
            let zombie = try #require(pipeline.worker(named: owner))
            zombie.send(signal: SIGSTOP)
            let restores = pipeline.log(of: successor).components(separatedBy: "state restored").count
            try await eventually("the successor restored the partition", limit: .seconds(60)) {
                pipeline.log(of: successor).components(separatedBy: "state restored").count > restores
            }
            // The successor processes the update again (never committed) and then the end.
            let endID = LiveActivitiesEndToEndTests.id(5, 2)
            _ = try await pipeline.producer.send(Self.end(token, id: endID))
            try await eventually("the successor ended the activity", limit: .seconds(60)) {
                try await Self.changelog(of: token, pipeline).last?.hasPrefix("ended") == true
            }
            // The evicted worker runs again, learns that it lost the partition, and then its held
            // answer arrives: the update's activities record must not follow it.
            zombie.send(signal: SIGCONT)
            try await eventually("the evicted worker saw its partitions lost") { pipeline.log(of: owner).contains("partitions lost") }
            do {
                try await eventually("the evicted worker gave up the update's remaining outputs", limit: .seconds(60)) {
                    pipeline.log(of: owner).contains("outputs of a record whose partition left")
                }
            } catch is TimedOut {
                // The changelog below says what it did instead.
            }
            let changelog = try await Self.changelog(of: token, pipeline)
            #expect(
                changelog.last?.hasPrefix("ended") == true,
                "the activity's changelog: \(changelog); \(Self.groupLines(pipeline, ["w1", "w2"]))")
        }
    }
}
