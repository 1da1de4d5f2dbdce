import Dispatcher
import DispatcherService
import Foundation
import Kafka
import Records
import Testing
import TestSupport

/// Partition leaders that move under a running worker, and a broker that goes down and comes
/// back, on librdkafka's mock cluster of three brokers (the only broker here whose leaders a
/// test can move: `EmbeddedKafkaCluster.setPartitionLeader`). `serve` consumes the requests and
/// produces its outputs with the idempotent producer throughout: every move makes librdkafka
/// meet `NOT_LEADER_OR_FOLLOWER`, refresh its metadata and send again (fetches from the new
/// leader, produce batches retried with their sequence numbers). Nothing may be lost, nothing
/// written twice by the worker, each device's deliveries in the order of its requests, and the
/// requests topic committed to its end: one worker, no rebalance, so no fault here excuses a
/// duplicate of the worker's. The mock cluster checks sequence numbers only for transactional
/// producers (librdkafka 2.8's `rd_kafka_mock_validate_records`), so a produce request that
/// broker 3 appended and did not answer before it went down is appended again when retried: an
/// exact copy, which the test tells from a record the worker wrote twice (docs/testing.md). The
/// same missing check lets librdkafka's inferred acknowledgements lose records (see
/// ``kafkaProperties``): the test's producer is kept from them, and the worker's are excused only
/// on librdkafka's own record of them.
///
/// `scripts/faults` runs this suite on its own; CI runs that after `scripts/test`.
@Suite("faults: partition leaders moved and a broker down under serve (mock cluster, 3 brokers)", .serialized)
struct LeaderMoveFaultTests {
    static let partitions: Int32 = 12
    /// The broker taken down: not the group coordinator (broker 1), whose loss would end the
    /// member's session, a fault of another kind (a rebalance, at-least-once's duplicates).
    static let brokerDown: Int32 = 3

    @Test("leaders of the requests and output topics moved, and a broker down 3 s and up, under load: 0 lost, 0 duplicates, each device in order, all committed")
    func leadersMoveUnderLoad() async throws {
        let started = ContinuousClock.now
        try await Pipeline.with(
            brokers: 3, partitions: Self.partitions, apps: RealBrokerTests.apps(), kafkaProperties: Self.kafkaProperties,
            producerProperties: Self.producerProperties
        ) { pipeline in
            let cluster = try #require(pipeline.broker.embeddedCluster)
            try cluster.setGroupCoordinator(pipeline.group, broker: 1)
            let inputs = [Pipeline.requests]
            let outputs = [Pipeline.deliveries, Pipeline.launches, Pipeline.deadLetter]
            // Round 0: partition p led by broker p % 3 + 1; each round moves every partition named.
            try Self.lead(inputs + outputs, round: 0, cluster: cluster)
            let requests = TestRequest.mix(count: 20_000, devices: 500, bundleID: EndToEndTests.bundleID, kinds: RealBrokerTests.fastKinds)
            // librdkafka's `eos` debug lines (logged at debug) say which outputs it acknowledged by inference.
            try pipeline.startWorker("worker", environment: ["LOG_LEVEL": "debug"])
            try await RealBrokerTests.waitUntilAssigned(["worker"], in: pipeline)

            let (ends, moves) = try await RealBrokerTests.produce(requests, in: pipeline) {
                var seen = 2_000
                var moves = 0
                // Each fault once the worker has moved on since the last: outputs keep flowing.
                func progressed() async throws {
                    seen += 2_000
                    try await pipeline.outputs.waitFor(min(seen, requests.count), in: Pipeline.accountingTopics)
                }
                try await pipeline.outputs.waitFor(seen, in: Pipeline.accountingTopics)
                moves += try Self.lead(inputs, round: 1, cluster: cluster)
                try await progressed()
                moves += try Self.lead(outputs, round: 1, cluster: cluster)
                try await progressed()
                // The broker's outage is what is tested: nothing to await but the clock.
                try cluster.setBrokerDown(Self.brokerDown)
                try await Task.sleep(for: .seconds(3))
                try cluster.setBrokerUp(Self.brokerDown)
                try await progressed()
                moves += try Self.lead(inputs + outputs, round: 2, cluster: cluster)
                // The cluster answers metadata requests with the moved leaders.
                for topic in inputs + outputs {
                    #expect(try await cluster.leader(topic: topic, partition: 1) == Self.leader(of: 1, round: 2))
                }
                return moves
            }
            let excused = try await pipeline.waitForEveryOutput(requests: requests, workers: ["worker"]) { lost in
                await Self.lostToImplicitAcks(lost, in: pipeline, ends: ends)
            }

            let accounting = Accounting(pipeline.outputs, requests: requests)
            #expect(Set(accounting.lost) == Set(excused), "lost: \(accounting.lost.prefix(3))")
            // The worker writes each output once: no duplicate but the mock cluster's own. It does
            // not check a producer's sequence numbers unless the producer is transactional, so a
            // produce request broker 3 appended but did not answer before going down is appended
            // again when librdkafka retries it: exact copies, timestamps included, and the worker
            // told of no failure (a failed output it wrote again would be a warning, and a record
            // decided again would carry other times). The test's own requests are copied so too:
            // a request the requests topic holds twice is rightly decided twice.
            let warnings = Self.warnings(in: pipeline.log(of: "worker"))
            let copies = try await Self.requestCopies(in: pipeline)
            let heldTwice = copies.filter { $0.value > 1 }.keys.sorted()
            // A request's outcome (a delivery or a dead letter), and apart from it its launch.
            let beyond = Accounting.writtenMoreThanHeld(pipeline.outputs, topics: Pipeline.accountingTopics, copies: copies)
                + Accounting.writtenMoreThanHeld(pipeline.outputs, topics: [Pipeline.launches], copies: copies)
            #expect(
                beyond.isEmpty && (accounting.exactCopies == 0 || warnings == "none"),
                "each output written once by the worker across leader moves (once per copy of its request): \(accounting); written more often than held: \(beyond.prefix(5)); the worker's warnings: \(warnings); requests the requests topic holds more than once: \(heldTwice.count) \(heldTwice.prefix(5))")
            #expect(accounting.strangers == 0, "\(accounting): e.g. \(accounting.strangerExamples.prefix(3))")
            let written = requests.filter { !excused.contains($0.apnsID) }
            try await RealBrokerTests.expectDecidedAsOffline(requests: written, responses: [], in: pipeline, orderKept: true, requestCopies: copies)
            try await RealBrokerTests.expectCommitted(requests: ends, responses: [:], in: pipeline)
            let assignments = RealBrokerTests.assignments(["worker"], in: pipeline)
            #expect(assignments == 1, "one assignment: no fault here ended the member's session")
            try await RealBrokerTests.stopGracefully(["worker"], in: pipeline)
            // Written without transactions and never compacted, the consumed topics have no gap:
            // the consumer handed over every offset (read from the last snapshot, at shutdown).
            let snapshot = try #require(try await pipeline.latestSnapshots()["worker"], "the worker's metrics snapshots")
            #expect(snapshot.totals.offsetsSkipped == 0, "offsets the worker's consumer jumped over")
            print(FaultFigures(
                name: "leaders moved under the worker", guarantee: .atLeastOnce, requests: requests.count,
                faults: "\(moves) partition leader moves over 3 rounds (requests, then outputs, then both) and broker \(Self.brokerDown) down 3 s",
                lost: accounting.lost.count, duplicates: accounting.duplicates, restarts: 0, recovery: nil,
                seconds: RealBrokerTests.seconds(since: started),
                note: "mock cluster, 3 brokers, 1 worker, \(assignments) assignment\(excused.isEmpty ? "" : "; \(excused.count) lost to the mock cluster's implicit acknowledgements")"))
        }
    }

    @Test("librdkafka's implicit acknowledgements are read from a worker's JSON log, and nothing else is")
    func implicitAcksAreRead() {
        let log = [
            #"{"label":"notification-dispatcher","level":"debug","message":"[thrd:127.0.0.1:40001/3]: 127.0.0.1:40001/3: notifications.deliveries [7] 12 message(s) implicitly acked by subsequent batch success (msgids 100..111, last acked 99)","metadata":{"kafka.facility":"IMPLICITACK"},"source":"Kafka","timestamp":"2026-12-04T16:00:00.000Z"}"#,
            #"{"label":"notification-dispatcher","level":"debug","message":"[thrd:main]: Idempotent producer state change WaitPID -> Assigned","metadata":{"kafka.facility":"IDEMPSTATE"},"source":"Kafka","timestamp":"2026-12-04T16:00:00.001Z"}"#,
            #"{"label":"notification-dispatcher","level":"debug","message":"[thrd:127.0.0.1:40002/2]: 127.0.0.1:40002/2: notifications.dead-letter [10] 3 message(s) implicitly acked by subsequent batch success (msgids 7..9, last acked 6)","metadata":{"kafka.facility":"IMPLICITACK"},"source":"Kafka","timestamp":"2026-12-04T16:00:00.002Z"}"#,
        ].joined(separator: "\n")
        let acks = Self.implicitAcks(in: log)
        #expect(acks.map { "\($0.topic)[\($0.partition)] \($0.count)" } == ["notifications.deliveries[7] 12", "notifications.dead-letter[10] 3"])
    }

    /// The warning and error lines of a worker's log, but for lost and refused connections
    /// (every leader move and broker 3's outage make many), at most 30: what a failure message
    /// needs to tell why an output was written twice (a produce failure replayed, a rewind).
    static func warnings(in log: String) -> String {
        // The worker logs JSON lines (`serve`'s log format): the level is a field. (Matched as
        // " warning " before, which no JSON line holds: the check that the worker told of no
        // failure held whatever it logged.)
        let lines = log.split(separator: "\n").filter { line in
            ["warning", "error", "critical"].contains { line.contains("\"level\":\"\($0)\"") }
                && !["Connection refused", "_TRANSPORT (-195)", "\"kafka.facility\":\"FAIL\""].contains { line.contains($0) }
        }
        return lines.isEmpty ? "none" : lines.prefix(30).map { FaultGroup.message(of: $0) }.joined(separator: "\n")
    }

    /// How many times the requests topic holds each request, by `apns-id`: more than once for the
    /// mock cluster's copies of the test's own produce requests, retried after their broker
    /// appended them and lost the connection.
    static func requestCopies(in pipeline: Pipeline) async throws -> [String: Int] {
        var copies: [String: Int] = [:]
        for request in try await readToEnd(Pipeline.requests, on: pipeline.bootstrapServers, .readUncommitted) {
            if let id = request.header("apns-id") { copies[id, default: 0] += 1 }
        }
        return copies
    }

    // librdkafka's idempotent producer takes a later produce request's success as proof that an
    // earlier one whose fate it did not learn (a connection lost under it) was written too, and
    // reports that one's records delivered ("implicitly acked", `rd_kafka_dr_implicit_ack` in
    // 2.8's `rdkafka_broker.c`): a Kafka broker would have refused the later request
    // (`OUT_OF_ORDER_SEQUENCE_NUMBER`) had the earlier one not been written. The mock cluster
    // checks no sequence numbers for a producer that is not transactional, so such records are
    // reported delivered and never written (docs/faults.md, "The mock cluster's own losses").

    /// The test producer's properties: one produce request in flight per connection, so that a
    /// request's fate is known before the next is sent and no request is acknowledged by
    /// inference (requests that never reached the requests topic, seen once).
    static let producerProperties = ["max.in.flight.requests.per.connection": "1"]

    /// The worker's `kafka.properties`: librdkafka's `eos` debug lines, which say when it
    /// acknowledged records by inference (`IMPLICITACK`). The worker's own in-flight limit is
    /// librdkafka's (`kafka.properties` may not set it).
    static let kafkaProperties = Pipeline.defaultKafkaProperties.merging(["debug": "eos"]) { $1 }

    /// Why requests without an output (`lost`) are excused, or nil: the mock cluster's own loss of
    /// their outputs. Every requests partition committed to its end, the worker's consumer skipped
    /// no offset (so each was read and finished), and librdkafka acknowledged by inference, on the
    /// output topics, at least as many records as are missing.
    static func lostToImplicitAcks(_ lost: [String], in pipeline: Pipeline, ends: [Int32: Int64]) async -> String? {
        guard let committed = try? await pipeline.committedOffsets(), ends.allSatisfy({ committed[$0.key] == $0.value }),
            let snapshot = try? await pipeline.latestSnapshots()["worker"], snapshot.totals.offsetsSkipped == 0
        else { return nil }
        let acked = implicitAcks(in: pipeline.log(of: "worker"))
        let onOutputs = acked.filter { [Pipeline.deliveries, Pipeline.deadLetter].contains($0.topic) }.reduce(0) { $0 + $1.count }
        guard onOutputs >= lost.count else { return nil }
        return "\(lost.count) requests read, finished and committed without an output; librdkafka acknowledged "
            + "\(onOutputs) output records by inference (\(acked.map { "\($0.topic)[\($0.partition)] \($0.count)" }.joined(separator: ", ")))"
    }

    /// librdkafka's implicit acknowledgements in a worker's log (its `eos` debug lines): topic,
    /// partition and how many records each.
    static func implicitAcks(in log: String) -> [(topic: String, partition: Int32, count: Int)] {
        log.split(separator: "\n").compactMap { line in
            guard line.contains("implicitly acked by subsequent batch success") else { return nil }
            // "…]: <topic> [<partition>] <n> message(s) implicitly acked…"
            let text = FaultGroup.message(of: line)
            guard let match = text.firstMatch(of: /([A-Za-z0-9._-]+) \[(\d+)\] (\d+) message\(s\) implicitly acked/),
                let partition = Int32(match.2), let count = Int(match.3)
            else { return nil }
            return (String(match.1), partition, count)
        }
    }

    /// The leader of partition `partition` in round `round`: every round moves every partition.
    static func leader(of partition: Int32, round: Int32) -> Int32 {
        (partition + round) % 3 + 1
    }

    /// Makes ``leader(of:round:)`` the leader of each partition of each of `topics`.
    /// - Returns: how many partitions were given a leader.
    @discardableResult
    static func lead(_ topics: [String], round: Int32, cluster: EmbeddedKafkaCluster) throws -> Int {
        for topic in topics {
            for partition in 0..<partitions {
                try cluster.setPartitionLeader(topic: topic, partition: partition, broker: leader(of: partition, round: round))
            }
        }
        return topics.count * Int(partitions)
    }
}
