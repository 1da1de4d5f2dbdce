import Dispatcher
import Foundation
import Kafka
import Records
import Testing
import TestSupport

/// A worker paused (SIGSTOP) for well past its `session.timeout.ms` while requests flow to its
/// partitions, then continued (SIGCONT): a *zombie*, as a worker stalled by a long garbage
/// collection, a frozen container or a live-migrated VM is. The group gives its partitions to the
/// other worker meanwhile; when it runs again it still believes it owns them, with records in
/// flight and (exactly-once) a transaction open. Nothing may be lost; under exactly-once nothing
/// may be read twice by a `read_committed` reader, so the zombie's transaction must be fenced or
/// aborted, never committed over its successor's work.
///
/// The `serve` binary on Tansu, two workers, 20,000 requests, half of them produced while the
/// worker is frozen. `scripts/faults` runs this suite on its own; CI runs that after `scripts/test`.
@Suite(
    "faults: a worker paused past its session on Tansu (a zombie)",
    .serialized,
    .enabled(if: TansuBroker.isInstalled, "needs Tansu: scripts/install-tansu (scripts/test installs it)")
)
struct PausedWorkerFaultTests {
    /// How long the worker stays frozen: more than three sessions (`RealBrokerTests.kafkaProperties`: 6 s).
    static let pause: Duration = .seconds(20)

    @Test(
        "a worker frozen for 20 s (6 s session) while half the requests are produced, then continued: nothing lost, exactly-once no duplicate, the group whole with lag 0",
        arguments: [DeliveryGuarantee.atLeastOnce, .exactlyOnce])
    func pausedWorker(guarantee: DeliveryGuarantee) async throws {
        let started = ContinuousClock.now
        let dispatch = guarantee == .exactlyOnce ? "  guarantee: exactly-once" : ""
        try await Pipeline.with(
            on: try await .tansu(), partitions: 12, dispatch: dispatch, apps: RealBrokerTests.apps(),
            kafkaProperties: RealBrokerTests.kafkaProperties
        ) { pipeline in
            // What is written, committed or not (exactly-once on Tansu commits late: below).
            let written = try OutputCollector(
                bootstrapServers: pipeline.bootstrapServers, topics: Pipeline.accountingTopics, logger: pipeline.logger, isolation: .readUncommitted)
            try await withCleanUp(of: written, { await $0.close() }) { written in
                try await Self.pausedWorker(guarantee: guarantee, pipeline: pipeline, written: written, started: started)
            }
        }
    }

    /// The scenario of ``pausedWorker(guarantee:)``.
    static func pausedWorker(guarantee: DeliveryGuarantee, pipeline: Pipeline, written: OutputCollector, started: ContinuousClock.Instant) async throws {
        let group = FaultGroup(pipeline: pipeline)
        let requests = TestRequest.mix(count: 20_000, devices: 500, bundleID: EndToEndTests.bundleID, kinds: RealBrokerTests.fastKinds)
        let before = Array(requests[..<10_000])
        let during = Array(requests[10_000...])
        try group.start("worker-a")
        try group.start("worker-b")
        try await RealBrokerTests.waitUntilAssigned(["worker-a", "worker-b"], in: pipeline)
        try await eventually("both workers to hold partitions", limit: .seconds(60)) { group.isWhole(partitions: pipeline.partitions) }

        var ends = try await pipeline.produce(before).ends
        // Half of the first half out: worker-b has records in flight (and a transaction open).
        try await pipeline.outputs.waitFor(before.count / 2, in: Pipeline.accountingTopics)
        let zombie = try #require(group.process("worker-b"))
        let zombiePartitions = try #require(group.heldPartitions("worker-b"))
        let takeovers = group.assignments("worker-a")
        zombie.send(signal: SIGSTOP)
        group.noteFaultBegins()
        let frozen = ContinuousClock.now
        var setAside: Set<TopicPartitionOffset> = []
        if guarantee == .exactlyOnce {
            // Only worker-b writes its partitions until worker-a is given them (a worker logs
            // an assignment before it takes a record of it): what lies beyond their last
            // stable offset now is worker-b's open transaction.
            setAside = try await CommittedOutputs.openTransactionRecords(partitions: zombiePartitions, on: pipeline.bootstrapServers)
            #expect(group.assignments("worker-a") == takeovers, "worker-a took worker-b's partitions over before they were read")
        }
        ends.merge(try await pipeline.produce(during).ends, uniquingKeysWith: max)
        try await eventually("worker-a to take worker-b's partitions over", limit: RealBrokerTests.sessionTimeout + .seconds(60)) {
            group.assignments("worker-a") > takeovers
        }
        // worker-a does all the work, worker-b's share included, while worker-b is frozen: once
        // it has written every output, nobody but the zombie has anything to write when it
        // runs again. (Under exactly-once on Tansu, worker-a's offsets commit only once the
        // zombie's transaction ends: Tansu completes a transaction only with those that
        // overlap it in a partition and began before it. So the outputs are awaited as
        // written, read_uncommitted, not as committed.)
        try await CommittedOutputs.waitUntilEveryRequestWritten(requests, in: written, excluding: setAside)
        try await group.supervise(until: frozen + Self.pause)
        let frozenFor = ContinuousClock.now - frozen
        let marks = try await CommittedOutputs.ends(partitions: pipeline.partitions, on: pipeline.bootstrapServers)
        let resumeMark = pipeline.log(of: "worker-b").utf8.count
        zombie.send(signal: SIGCONT)
        let resumed = ContinuousClock.now
        let resumedAt = Date()
        let (recovery, lowest) = try await group.watchingCommitted { [ends] in
            try await group.waitUntilRecovered(ends: ends, since: resumed)
        }
        // At-least-once, a commit of the zombie's (its offsets are below the ends: half the
        // requests came while it was frozen) moves its partitions back until their next owner
        // catches up: Tansu does not check a commit's generation (Kafka refuses it).
        let movedBack = lowest.filter { $0.value < ends[$0.key] ?? 0 }
        try await pipeline.waitForEveryOutput(requests: requests, workers: group.names)

        let zombieLog = Substring(pipeline.log(of: "worker-b").utf8.dropFirst(resumeMark))
        let lost: Int
        let duplicates: Int
        var note = "frozen \(seconds(frozenFor)) s, session 6 s; \(zombiePartitions.count) partitions moved"
        if guarantee == .exactlyOnce {
            try await RealBrokerTests.expectDecidedAsOffline(requests: requests, responses: [], in: pipeline, orderKept: false)
            // Left out as a Kafka reader never sees them: the zombie's transaction open when
            // it was frozen, and what it wrote into that transaction after SIGCONT, before it
            // aborted it (nobody else had anything to write then). Anything written after
            // the abort counts: a new owner processing again what a commit of the zombie's
            // moved back would show as duplicates.
            let aborted = try #require(
                group.firstTime("worker-b", after: resumeMark, of: ["the open transaction was aborted", "transactions initialised"]),
                "the zombie's transaction was aborted, by itself or by its restart: \(zombieLog.suffix(3_000))")
            let committed = try await CommittedOutputs.read(
                requests: requests, setAside: setAside, writtenAfter: marks, createdBefore: aborted, on: pipeline.bootstrapServers)
            #expect(committed.lost.isEmpty, "lost: \(committed.lost.prefix(3)); \(committed)")
            #expect(
                committed.duplicates == 0,
                """
                read_committed sees each request once, the zombie's transaction left out: \(committed); \
                SIGCONT at ms \(FailurePlaces.millisecond(resumedAt)), the requests' ends \(ends.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }); \
                committed offsets during recovery: \(group.committedHistory()); \(group.logTails(lines: 20))
                """)
            #expect(committed.duplicateLaunches == 0, "each launch once: \(committed)")
            #expect(committed.partitionsWrittenAfter.isSubset(of: zombiePartitions), "only the zombie wrote after SIGCONT: \(committed.partitionsWrittenAfter)")
            // The zombie's transaction never commits: it stops on its lost partitions (or is
            // fenced), aborting it.
            let ended = zombieLog.contains("partitions were lost") || zombieLog.contains("fenced")
            #expect(ended, "the continued worker stopped on its lost partitions: \(zombieLog.suffix(3_000))")
            lost = committed.lost.count
            duplicates = committed.duplicates
            note += "; \(committed.setAside) records of the zombie's transaction set aside (\(committed.rawDuplicates) raw duplicates)"
        } else {
            let accounting = try await RealBrokerTests.expectAtLeastOnce(requests: requests, ends: ends, in: pipeline)
            lost = accounting.lost.count
            duplicates = accounting.duplicates
            if !movedBack.isEmpty { note += "; the zombie's commits moved \(movedBack.count) partitions back" }
        }
        #expect(group.exits.allSatisfy { !$0.contains("no critical line") }, "every exit says why: \(group.exits)")
        if !group.exits.isEmpty { note += "; " + group.exits.joined(separator: "; ") }
        try await group.stopGracefully()
        print(FaultFigures(
            name: "worker paused past its session", guarantee: guarantee, requests: requests.count,
            faults: "worker-b SIGSTOP for \(seconds(frozenFor)) s with \(during.count) requests produced meanwhile, then SIGCONT",
            lost: lost, duplicates: duplicates, restarts: group.restarts, recovery: recovery,
            seconds: RealBrokerTests.seconds(since: started), note: note))
    }

    static func seconds(_ duration: Duration) -> String {
        String(format: "%.1f", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }
}
