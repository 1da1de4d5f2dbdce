import Dispatcher
import Foundation
import Kafka
import Records
import Testing
import TestSupport

/// Workers cut off from their broker by the network, not by a signal: Tansu and each `serve`
/// process run in network namespaces of their own on one bridge (``NetworkLab``), and a fault is
/// a link taken down and brought up again. A process cut off this way keeps running and keeps
/// its connections open; nothing it sends arrives and nothing reaches it, as when a switch port
/// dies or a cloud network partitions.
///
/// Cases: one of two workers cut off for 20 s while requests flow; the broker's own link
/// flapping (down 2 s, up 3 s, five times) under load; the whole group cut off for longer than
/// its transactions' timeout under exactly-once. Each: nothing lost; under exactly-once no
/// duplicate for a `read_committed` reader (the transactions the cut left open set aside, as
/// Tansu shows them once aborted: ``CommittedOutputs``); the requests topic committed to its end;
/// a worker that comes back works on, or exits saying why and its restart (which the test, as a
/// supervisor, makes) recovers.
///
/// Needs root and iproute2, as CI has. `scripts/faults` runs this suite on its own; CI runs that after `scripts/test`.
@Suite(
    "faults: workers cut off from Tansu by the network (namespaces)",
    .serialized,
    .enabled(if: TansuBroker.isInstalled, "needs Tansu: scripts/install-tansu (scripts/test installs it)"),
    .enabled(if: NetworkLab.isAvailable, "needs root and iproute2 (ip netns, veth, bridge), as CI has")
)
struct NetworkFaultTests {
    /// The broker's port in its namespace (the namespace is the lab's: no other process uses it).
    static let brokerPort = 9092
    static let partitions: Int32 = 12

    @Test(
        "one of two workers cut off for 20 s while requests flow, then reconnected: nothing lost, exactly-once no duplicate, lag 0",
        arguments: [DeliveryGuarantee.atLeastOnce, .exactlyOnce])
    func workerCutOff(guarantee: DeliveryGuarantee) async throws {
        let started = ContinuousClock.now
        try await Self.withLab(guarantee: guarantee) { lab, pipeline, group, written in
            let requests = TestRequest.mix(count: 20_000, devices: 500, bundleID: EndToEndTests.bundleID, kinds: RealBrokerTests.fastKinds)
            let before = Array(requests[..<10_000])
            let during = Array(requests[10_000...])
            let hosts = try await Self.startWorkers(["worker-a", "worker-b"], lab: lab, group: group)
            var ends = try await pipeline.produce(before).ends
            try await pipeline.outputs.waitFor(before.count / 2, in: Pipeline.accountingTopics)
            let cutPartitions = try #require(group.heldPartitions("worker-b"))
            let takeovers = group.assignments("worker-a")
            let logMark = pipeline.log(of: "worker-b").utf8.count
            try await lab.setLink(hosts["worker-b"]!, up: false)
            group.noteFaultBegins()
            let cut = ContinuousClock.now
            let setAside = try await Self.openTransaction(guarantee, partitions: cutPartitions, pipeline: pipeline) {
                group.assignments("worker-a") == takeovers
            }
            ends.merge(try await pipeline.produce(during).ends, uniquingKeysWith: max)
            try await eventually("worker-a to take worker-b's partitions over", limit: .seconds(90)) {
                try group.restartExited()
                return group.assignments("worker-a") > takeovers
            }
            // worker-a writes every output, worker-b's share included, while worker-b is cut off
            // (written, not committed: see PausedWorkerFaultTests); then only worker-b can write.
            try await CommittedOutputs.waitUntilEveryRequestWritten(requests, in: written, excluding: setAside)
            try await group.supervise(until: cut + .seconds(20))
            if guarantee == .exactlyOnce {
                // Exactly-once, worker-b stops by itself (its partitions were lost) and is started
                // again; its link comes back once it has. Reconnected while still stopping, it
                // leaves the group before its restart aborts its transaction, and on Tansu the
                // member given its partitions in between starts from offsets already done (docs/faults.md,
                // "Tansu's transactions"): duplicates of Tansu's making, which Kafka does not have.
                try await eventually("worker-b to stop while cut off", limit: .seconds(120)) {
                    try group.restartExited()
                    return group.restarts >= 1
                }
            }
            let cutFor = ContinuousClock.now - cut
            let marks = try await CommittedOutputs.ends(partitions: Self.partitions, on: pipeline.bootstrapServers)
            try await lab.setLink(hosts["worker-b"]!, up: true)
            let recovery = try await group.waitUntilRecovered(ends: ends, since: ContinuousClock.now)
            // worker-b's transaction ends when it aborts it or its restart initialises (which aborts it).
            let aborted = group.firstTime("worker-b", after: logMark, of: ["the open transaction was aborted", "transactions initialised"])
            let (lost, duplicates, note) = try await Self.account(
                guarantee, requests: requests, ends: ends, setAside: setAside, writtenAfter: marks, createdBefore: aborted,
                pipeline: pipeline, group: group)
            try await group.stopGracefully()
            print(FaultFigures(
                name: "a worker cut off", guarantee: guarantee, requests: requests.count,
                faults: "worker-b's link down for \(PausedWorkerFaultTests.seconds(cutFor)) s (session 6 s"
                    + (guarantee == .exactlyOnce ? "; until it had stopped" : "") + ") with \(during.count) requests produced meanwhile",
                lost: lost, duplicates: duplicates, restarts: group.restarts, recovery: recovery,
                seconds: RealBrokerTests.seconds(since: started), note: note))
        }
    }

    @Test(
        "the broker's link flapping (down 2 s, up 3 s, five times) under load: nothing lost, exactly-once no duplicate, lag 0",
        arguments: [DeliveryGuarantee.atLeastOnce, .exactlyOnce])
    func brokerLinkFlapping(guarantee: DeliveryGuarantee) async throws {
        let started = ContinuousClock.now
        try await Self.withLab(guarantee: guarantee) { lab, pipeline, group, written in
            let requests = TestRequest.mix(count: 20_000, devices: 500, bundleID: EndToEndTests.bundleID, kinds: RealBrokerTests.fastKinds)
            _ = try await Self.startWorkers(["worker-a", "worker-b"], lab: lab, group: group)
            let (ends, (lastUp, outputsDuring)) = try await RealBrokerTests.produce(requests, in: pipeline) {
                try await pipeline.outputs.waitFor(requests.count / 10, in: Pipeline.accountingTopics)
                let outputsBefore = pipeline.outputs.count(Pipeline.accountingTopics)
                group.noteFaultBegins()
                // The lengths of the outages and of the time between them are what is tested.
                var lastUp = ContinuousClock.now
                for _ in 0..<5 {
                    try await lab.setLink(lab.brokerHost, up: false)
                    try await group.supervise(until: .now + .seconds(2))
                    try await lab.setLink(lab.brokerHost, up: true)
                    lastUp = ContinuousClock.now
                    try await group.supervise(until: .now + .seconds(3))
                }
                return (lastUp, pipeline.outputs.count(Pipeline.accountingTopics) - outputsBefore)
            }
            let recovery = try await group.waitUntilRecovered(ends: ends, since: lastUp)
            let (lost, duplicates, accountNote) = try await Self.account(
                guarantee, requests: requests, ends: ends, setAside: [], pipeline: pipeline, group: group)
            let note = "\(outputsDuring) outputs read during the 25 s of flapping; " + accountNote
            try await group.stopGracefully()
            print(FaultFigures(
                name: "the broker's link flapping", guarantee: guarantee, requests: requests.count,
                faults: "the broker's link down 2 s and up 3 s, five times, while requests flowed", lost: lost, duplicates: duplicates,
                restarts: group.restarts, recovery: recovery, seconds: RealBrokerTests.seconds(since: started),
                note: note))
        }
    }

    /// The shortest `transaction.timeout.ms` an exactly-once worker sets (it may not be set in
    /// `kafka.properties`): `WorkerSettings` takes at least 60 s.
    static let transactionTimeout: Duration = .seconds(60)

    @Test("the whole group cut off for longer than transaction.timeout.ms under exactly-once, then reconnected: nothing lost, no duplicate, lag 0")
    func groupCutOffPastTransactionTimeout() async throws {
        let started = ContinuousClock.now
        let guarantee = DeliveryGuarantee.exactlyOnce
        try await Self.withLab(guarantee: guarantee) { lab, pipeline, group, written in
            let requests = TestRequest.mix(count: 20_000, devices: 500, bundleID: EndToEndTests.bundleID, kinds: RealBrokerTests.fastKinds)
            let before = Array(requests[..<10_000])
            let during = Array(requests[10_000...])
            let hosts = try await Self.startWorkers(["worker-a", "worker-b"], lab: lab, group: group)
            var ends = try await pipeline.produce(before).ends
            try await pipeline.outputs.waitFor(before.count / 2, in: Pipeline.accountingTopics)
            // Cut when every worker holds partitions: a member cut off in the middle of a
            // rebalance holds none, so librdkafka has nothing to report lost and it waits for
            // the broker rather than stopping (on a loaded machine a session may end before
            // the cut, and the group rebalance).
            try await eventually("every worker to hold partitions before the cut", limit: .seconds(60)) {
                group.isWhole(partitions: Self.partitions)
            }
            for host in hosts.values { try await lab.setLink(host, up: false) }
            group.noteFaultBegins()
            let cut = ContinuousClock.now
            let cutDate = Date()
            // Nobody can write now: what lies beyond the last stable offsets is the two workers'
            // open transactions, and the partitions' ends stay where they are until the links
            // come back.
            let setAside = try await Self.openTransaction(guarantee, partitions: Set(0..<Self.partitions), pipeline: pipeline) { true }
            let marks = try await CommittedOutputs.ends(partitions: Self.partitions, on: pipeline.bootstrapServers)
            ends.merge(try await pipeline.produce(during).ends, uniquingKeysWith: max)
            try await group.supervise(until: cut + Self.transactionTimeout + .seconds(5))
            // Their sessions long over, both stop by themselves (exactly-once stops on lost
            // partitions) and are started again; the links come back once both have.
            try await eventually("both workers to stop while cut off", limit: .seconds(120)) {
                try group.restartExited()
                return group.restarts >= hosts.count
            }
            let cutFor = ContinuousClock.now - cut
            for host in hosts.values { try await lab.setLink(host, up: true) }
            let recovery = try await group.waitUntilRecovered(ends: ends, since: ContinuousClock.now)
            // What the stopped processes had sent into the network before the cut may still reach
            // the broker when the links come back (a socket's unsent data outlives its process),
            // into their transactions, which their restarts abort: written after the marks,
            // created before the cut, set aside. Anything created after the cut counts.
            let (lost, duplicates, note) = try await Self.account(
                guarantee, requests: requests, ends: ends, setAside: setAside, writtenAfter: marks, createdBefore: cutDate,
                pipeline: pipeline, group: group)
            try await group.stopGracefully()
            print(FaultFigures(
                name: "the whole group cut off", guarantee: guarantee, requests: requests.count,
                faults: "both workers' links down for \(PausedWorkerFaultTests.seconds(cutFor)) s (transaction.timeout.ms 60 s; until both had stopped) with \(during.count) requests produced meanwhile",
                lost: lost, duplicates: duplicates, restarts: group.restarts, recovery: recovery,
                seconds: RealBrokerTests.seconds(since: started), note: note))
        }
    }
}

extension NetworkFaultTests {
    /// Runs `body` with a lab whose broker namespace runs Tansu, and a pipeline on it: the
    /// broker listens and advertises its address on the bridge, which the test's own clients
    /// (producer, output readers) reach from the test's namespace and the workers from theirs.
    /// `body` also gets a reader of the outputs written, committed or not (`read_uncommitted`).
    static func withLab(
        guarantee: DeliveryGuarantee, _ body: (NetworkLab, Pipeline, FaultGroup, OutputCollector) async throws -> Void
    ) async throws {
        try await NetworkLab.with { lab in
            let placement = TansuBroker.Placement(host: lab.brokerHost.address, port: brokerPort, launcher: lab.brokerHost.launcher)
            try await Pipeline.with(
                on: try await .tansu(placement: placement), partitions: partitions,
                dispatch: guarantee == .exactlyOnce ? "  guarantee: exactly-once" : "", apps: RealBrokerTests.apps(),
                kafkaProperties: RealBrokerTests.kafkaProperties
            ) { pipeline in
                let group = FaultGroup(pipeline: pipeline)
                let written = try OutputCollector(
                    bootstrapServers: pipeline.bootstrapServers, topics: Pipeline.accountingTopics, logger: pipeline.logger,
                    isolation: .readUncommitted)
                try await withCleanUp(of: written, { await $0.close() }) { written in
                    do {
                        try await body(lab, pipeline, group, written)
                    } catch {
                        group.stopSupervising()
                        // A worker that did not do what the test waited for (stop, take over)
                        // repeats a few lines for minutes: its whole log, repeats folded, says why.
                        Issue.record("what each worker logged, as distinct lines:\n\(group.logDigests())")
                        throw error
                    }
                }
            }
        }
    }

    /// Starts each worker in a namespace of its own and waits until the group is whole.
    /// - Returns: each worker's host, by name.
    static func startWorkers(_ names: [String], lab: NetworkLab, group: FaultGroup) async throws -> [String: NetworkLab.Host] {
        var hosts: [String: NetworkLab.Host] = [:]
        for name in names {
            let host = try await lab.addHost("w" + String(name.last!))
            hosts[name] = host
            try group.start(name, launcher: host.launcher)
        }
        try await RealBrokerTests.waitUntilAssigned(names, in: group.pipeline)
        try await eventually("every worker to hold partitions", limit: .seconds(60)) { group.isWhole(partitions: partitions) }
        return hosts
    }

    /// Under exactly-once, the records of the transactions open in `partitions` right after a
    /// cut, while only the workers cut off had written there (`stillAlone` checks it after the
    /// reading: no other worker was given them); nothing at-least-once.
    static func openTransaction(
        _ guarantee: DeliveryGuarantee, partitions: Set<Int32>, pipeline: Pipeline, stillAlone: () -> Bool
    ) async throws -> Set<TopicPartitionOffset> {
        guard guarantee == .exactlyOnce else { return [] }
        let open = try await CommittedOutputs.openTransactionRecords(partitions: partitions, on: pipeline.bootstrapServers)
        #expect(stillAlone(), "another worker took the partitions over before their open transaction was read")
        return open
    }

    /// The end of a run: every request has an output; at-least-once, nothing lost and each
    /// outcome as offline; exactly-once, read `read_committed` with `setAside` left out, nothing
    /// lost and no duplicate; each exit said why.
    /// - Returns: lost, duplicates, and a note for the figures.
    static func account(
        _ guarantee: DeliveryGuarantee, requests: [TestRequest], ends: [Int32: Int64], setAside: Set<TopicPartitionOffset>,
        writtenAfter marks: [TopicPartition: Int64] = [:], createdBefore: Date? = nil, pipeline: Pipeline, group: FaultGroup
    ) async throws -> (lost: Int, duplicates: Int, note: String) {
        try await pipeline.waitForEveryOutput(requests: requests, workers: group.names)
        var notes: [String] = []
        let result: (Int, Int)
        if guarantee == .exactlyOnce {
            try await RealBrokerTests.expectDecidedAsOffline(requests: requests, responses: [], in: pipeline, orderKept: false)
            let committed = try await CommittedOutputs.read(
                requests: requests, setAside: setAside, writtenAfter: createdBefore == nil ? [:] : marks,
                createdBefore: createdBefore ?? .distantPast, on: pipeline.bootstrapServers)
            #expect(committed.lost.isEmpty, "lost: \(committed.lost.prefix(3)); \(committed)")
            #expect(committed.duplicates == 0, "read_committed sees each request once, the open transactions left out: \(committed)")
            #expect(committed.duplicateLaunches == 0, "each launch once: \(committed)")
            notes.append("\(committed.setAside) records of open transactions set aside (\(committed.rawDuplicates) raw duplicates)")
            result = (committed.lost.count, committed.duplicates)
        } else {
            let accounting = try await RealBrokerTests.expectAtLeastOnce(requests: requests, ends: ends, in: pipeline)
            result = (accounting.lost.count, accounting.duplicates)
        }
        notes.append("\(RealBrokerTests.assignments(group.names, in: pipeline)) assignments")
        let rewinds = group.names.reduce(0) { $0 + pipeline.log(of: $1).components(separatedBy: "could not commit was aborted").count - 1 }
        if rewinds > 0 { notes.append("\(rewinds) transactions aborted and rewound") }
        #expect(group.exits.allSatisfy { !$0.contains("no critical line") }, "every exit says why: \(group.exits)")
        notes += group.exits
        return (result.0, result.1, notes.joined(separator: "; "))
    }
}
