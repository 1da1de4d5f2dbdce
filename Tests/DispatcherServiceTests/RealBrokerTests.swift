import DispatcherService
import Foundation
import Kafka
import Testing
import TestSupport

/// The `serve` binary on a real Kafka-protocol broker, Tansu (scripts/install-tansu), rather than
/// librdkafka's mock cluster: each test starts its own broker on a free loopback port, creates the
/// product's topics through the admin API, and runs worker processes through the same `Pipeline`
/// as the mock-cluster suites. Every request and response must be accounted for by a delivery,
/// action record or dead letter decided as the dispatcher decides offline, and every partition's
/// committed offset must reach its end: without a failure exactly once each; across SIGKILL,
/// rebalances and a broker outage at least once, the duplicates counted. Each test prints one line
/// of figures (`real-broker: ...`) that scripts/test shows.
///
/// `scripts/test` runs this suite in a phase of its own (`scripts/test --filter RealBroker` runs it alone).
@Suite(
    "serve on a real broker (RealBroker: Tansu)",
    .enabled(if: TansuBroker.isInstalled, "needs Tansu: scripts/install-tansu (scripts/test installs it)"),
    .serialized
)
struct RealBrokerTests {
    /// The workers' Kafka settings on Tansu: a member that stops heartbeating leaves the group after
    /// 6 s (a killed worker's partitions move on that soon), heartbeats every second, and an empty
    /// fetch waits at most 100 ms (a real broker holds it that long; the mock cluster answers at once).
    static let kafkaProperties = [
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "1000",
        "fetch.wait.max.ms": "100",
    ]
    static let sessionTimeout: Duration = .seconds(6)

    /// Both apps: the requests' (a rewrite extension, a webhook for category SLOW) and the
    /// responses' chat app (content extensions and actions for every row of the table).
    static func apps(webhookURL: String = "http://127.0.0.1:9/unused") -> String {
        EndToEndTests.apps(webhookURL: webhookURL) + "\n" + ResponsesEndToEndTests.apps
    }

    /// Every kind of request that needs no webhook.
    static let fastKinds = TestRequest.Kind.allCases.filter { $0 != .webhook }

    /// Runs `body` with a pipeline on a Tansu broker of its own.
    static func withTansu<Result>(
        partitions: Int32 = 12, webhookURL: String = "http://127.0.0.1:9/unused", _ body: (Pipeline) async throws -> Result
    ) async throws -> Result {
        try await Pipeline.with(
            on: try await .tansu(), partitions: partitions, apps: apps(webhookURL: webhookURL), kafkaProperties: kafkaProperties, body)
    }

    @Test("20,000 requests and 4,000 responses, two workers: exactly one output each, decided as offline, in device order, all committed")
    func everyRecordOnce() async throws {
        let started = ContinuousClock.now
        let webhook = WebhookServer()
        try await webhook.run(delay: .milliseconds(20)) { baseURL in
            try await Self.withTansu(webhookURL: baseURL + "/hook") { pipeline in
                let requests = TestRequest.mix(count: 20_000, devices: 300, bundleID: EndToEndTests.bundleID, kinds: TestRequest.Kind.allCases)
                let tokens = Array(Set(requests.map(\.token))).sorted()
                let responses = TestResponse.mix(count: 4_000, tokens: tokens)
                let workers = ["worker-a", "worker-b"]
                for name in workers { try pipeline.startWorker(name) }
                try await Self.waitUntilAssigned(workers, in: pipeline)
                async let producedRequests = pipeline.produce(requests)
                async let producedResponses = pipeline.produce(responses)
                let (requestEnds, responseEnds) = try await (producedRequests.ends, producedResponses.ends)
                try await pipeline.waitForEveryOutput(requests: requests, responses: responses, workers: workers)

                let accounting = Accounting(pipeline.outputs, requests: requests, responses: responses)
                #expect(accounting.lost.isEmpty, "lost: \(accounting.lost.prefix(3))")
                #expect(accounting.duplicates == 0, "without a failure, every request and response has one output: \(accounting)")
                #expect(accounting.strangers == 0, "\(accounting.strangers) outputs of nothing sent, e.g. \(accounting.strangerExamples.prefix(3))")
                #expect(webhook.calls == requests.filter { $0.kind == .webhook }.count)
                try await Self.expectDecidedAsOffline(requests: requests, responses: responses, in: pipeline, orderKept: true)
                try await Self.expectCommitted(requests: requestEnds, responses: responseEnds, in: pipeline)
                let assignments = Self.assignments(workers, in: pipeline)
                try await Self.stopGracefully(workers, in: pipeline)
                print(RunFigures(
                    name: "every record once", requests: requests.count, responses: responses.count, workers: workers.count,
                    kills: 0, assignments: assignments, accounting: accounting, seconds: Self.seconds(since: started)))
            }
        }
    }

    @Test("a worker killed with SIGKILL mid-run and started again: nothing lost, duplicates counted, all committed")
    func killedAndRestarted() async throws {
        let started = ContinuousClock.now
        try await Self.withTansu { pipeline in
            let requests = TestRequest.mix(count: 20_000, devices: 500, bundleID: EndToEndTests.bundleID, kinds: Self.fastKinds)
            try pipeline.startWorker("worker-a")
            try pipeline.startWorker("worker-b")
            try await Self.waitUntilAssigned(["worker-a", "worker-b"], in: pipeline)
            let (ends, _) = try await Self.produce(requests, in: pipeline) {
                // A quarter of the outputs out: worker-b dies with records in flight and uncommitted work.
                try await pipeline.outputs.waitFor(requests.count / 4, in: Pipeline.accountingTopics)
                let killed = try #require(pipeline.worker(named: "worker-b"))
                killed.send(signal: SIGKILL)
                _ = try await killed.waitForExit(limit: .seconds(10))
                try pipeline.startWorker("worker-b-again")
                try await Self.waitUntilAssigned(["worker-b-again"], in: pipeline)
            }
            let workers = ["worker-a", "worker-b", "worker-b-again"]
            try await pipeline.waitForEveryOutput(requests: requests, workers: workers)
            let accounting = try await Self.expectAtLeastOnce(requests: requests, ends: ends, in: pipeline)
            let assignments = Self.assignments(workers, in: pipeline)
            try await Self.stopGracefully(["worker-a", "worker-b-again"], in: pipeline)
            print(RunFigures(
                name: "SIGKILL and restart", requests: requests.count, responses: 0, workers: workers.count, kills: 1,
                assignments: assignments, accounting: accounting, seconds: Self.seconds(since: started)))
        }
    }

    @Test("three workers, one killed and one added while records flow: the group rebalances, nothing lost, all committed")
    func rebalancesWhileRecordsFlow() async throws {
        let started = ContinuousClock.now
        try await Self.withTansu { pipeline in
            let requests = TestRequest.mix(count: 18_000, devices: 500, bundleID: EndToEndTests.bundleID, kinds: Self.fastKinds)
            let phases = stride(from: 0, to: requests.count, by: 6_000).map { Array(requests[$0..<min($0 + 6_000, requests.count)]) }
            let first = ["worker-a", "worker-b", "worker-c"]
            for name in first { try pipeline.startWorker(name) }
            try await Self.waitUntilAssigned(first, in: pipeline)
            var ends: [Int32: Int64] = [:]
            // Phase 1 flows; half of it out, worker-b dies (SIGKILL) and phase 2 is produced while the
            // group notices (after session.timeout.ms) and gives worker-b's partitions to the others.
            // Then worker-d joins while phase 3 is produced.
            let before = Self.assignments(["worker-a", "worker-c"], in: pipeline)
            ends.merge(try await pipeline.produce(phases[0]).ends, uniquingKeysWith: max)
            try await pipeline.outputs.waitFor(phases[0].count / 2, in: Pipeline.accountingTopics)
            let killed = try #require(pipeline.worker(named: "worker-b"))
            killed.send(signal: SIGKILL)
            _ = try await killed.waitForExit(limit: .seconds(10))
            ends.merge(try await pipeline.produce(phases[1]).ends, uniquingKeysWith: max)
            try await eventually("worker-b's partitions to move to worker-a and worker-c", limit: Self.sessionTimeout + .seconds(30)) {
                Self.assignments(["worker-a", "worker-c"], in: pipeline) > before
            }
            try pipeline.startWorker("worker-d")
            ends.merge(try await pipeline.produce(phases[2]).ends, uniquingKeysWith: max)
            try await Self.waitUntilAssigned(["worker-d"], in: pipeline)

            let workers = first + ["worker-d"]
            try await pipeline.waitForEveryOutput(requests: requests, workers: workers)
            let accounting = try await Self.expectAtLeastOnce(requests: requests, ends: ends, in: pipeline)
            let assignments = Self.assignments(workers, in: pipeline)
            // Three first assignments, at least one survivor given worker-b's partitions, worker-d's
            // (cooperative-sticky may give all of worker-b's partitions to one survivor).
            #expect(assignments >= first.count + 2, "the kill and the new worker each rebalanced the group")
            try await Self.stopGracefully(["worker-a", "worker-c", "worker-d"], in: pipeline)
            print(RunFigures(
                name: "rebalances", requests: requests.count, responses: 0, workers: workers.count, kills: 1,
                assignments: assignments, accounting: accounting, seconds: Self.seconds(since: started)))
        }
    }

    @Test("the broker frozen (SIGSTOP) for longer than session.timeout.ms mid-run, then resumed: nothing lost, all committed")
    func brokerOutage() async throws {
        let started = ContinuousClock.now
        try await Self.withTansu { pipeline in
            let broker = try #require(pipeline.broker.tansuBroker)
            let requests = TestRequest.mix(count: 12_000, devices: 500, bundleID: EndToEndTests.bundleID, kinds: Self.fastKinds)
            let workers = ["worker-a", "worker-b"]
            for name in workers { try pipeline.startWorker(name) }
            try await Self.waitUntilAssigned(workers, in: pipeline)
            let outage = Self.sessionTimeout + .seconds(3)
            let (ends, _) = try await Self.produce(requests, in: pipeline) {
                try await pipeline.outputs.waitFor(requests.count / 4, in: Pipeline.accountingTopics)
                // The outage's length is what is tested: nothing to await but the clock.
                broker.freeze()
                try await Task.sleep(for: outage)
                broker.thaw()
            }
            try await pipeline.waitForEveryOutput(requests: requests, workers: workers)
            let accounting = try await Self.expectAtLeastOnce(requests: requests, ends: ends, in: pipeline)
            let assignments = Self.assignments(workers, in: pipeline)
            #expect(assignments >= 2 * workers.count, "the outage outlasted the sessions: each worker was given partitions again")
            try await Self.stopGracefully(workers, in: pipeline)
            print(RunFigures(
                name: "broker outage", requests: requests.count, responses: 0, workers: workers.count, kills: 0,
                assignments: assignments, accounting: accounting, seconds: Self.seconds(since: started),
                note: "broker frozen \(outage) (session.timeout.ms \(Self.sessionTimeout))"))
        }
    }

    @Test("the metrics topic carries each worker's snapshots with the run's totals, and top shows the group from it")
    func metricsTopicAndTop() async throws {
        let started = ContinuousClock.now
        try await Self.withTansu { pipeline in
            let collector = try OutputCollector(bootstrapServers: pipeline.bootstrapServers, topics: [Pipeline.metrics], logger: pipeline.logger)
            try await withCleanUp(of: collector, { await $0.close() }) { snapshots in
                // Responses too: a partition never written nor committed has no known lag, and a
                // snapshot lists the partitions whose lag is known.
                let requests = TestRequest.mix(count: 3_000, devices: 60, bundleID: EndToEndTests.bundleID, kinds: Self.fastKinds)
                let responses = TestResponse.mix(count: 600, tokens: Array(Set(requests.map(\.token))).sorted())
                let workers = ["worker-a", "worker-b"]
                for name in workers { try pipeline.startWorker(name) }
                try await Self.waitUntilAssigned(workers, in: pipeline)
                async let producedRequests = pipeline.produce(requests)
                async let producedResponses = pipeline.produce(responses)
                let (requestEnds, responseEnds) = try await (producedRequests.ends, producedResponses.ends)
                #expect(requestEnds.count == Int(pipeline.partitions) && responseEnds.count == Int(pipeline.partitions), "every partition written")
                try await pipeline.waitForEveryOutput(requests: requests, responses: responses, workers: workers)
                let expected = try await EndToEndTests.decideOffline(requests, configPath: pipeline.configPath)
                let expectedResponses = try await ResponsesEndToEndTests.decideOffline(responses, configPath: pipeline.configPath)
                let deadLetters = (Array(expected.values) + Array(expectedResponses.values)).filter { $0.disposition == "dead-letter" }.count
                let consumed = requests.count + responses.count

                // Each worker's latest snapshot: together they consumed every record once, no lag,
                // every partition of both input topics owned by one of them.
                do {
                    try await eventually("both workers' snapshots with every record and no lag", limit: .seconds(60)) {
                        let latest = Self.latestSnapshots(snapshots, group: pipeline.group)
                        return latest.count == workers.count
                            && latest.values.reduce(0) { $0 + $1.totals.consumed } == consumed
                            && latest.values.allSatisfy { $0.lag == 0 && $0.inFlight == 0 }
                            && latest.values.reduce(0) { $0 + $1.partitions.count } == 2 * Int(pipeline.partitions)
                    }
                } catch {
                    let latest = Self.latestSnapshots(snapshots, group: pipeline.group).values.map {
                        "\($0.workerId): consumed \($0.totals.consumed), lag \($0.lag), in flight \($0.inFlight), "
                            + "partitions \($0.partitions.map { "\($0.topic)/\($0.partition):\($0.lag.map(String.init) ?? "-")" })"
                    }
                    Issue.record("latest snapshots: \(latest)")
                    throw error
                }
                let latest = Self.latestSnapshots(snapshots, group: pipeline.group)
                #expect(latest.values.reduce(0) { $0 + $1.totals.deadLettered } == deadLetters)
                #expect(latest.values.reduce(0) { $0 + $1.totals.delivered } == requests.count - expected.values.filter { $0.disposition == "dead-letter" }.count)
                #expect(latest.values.reduce(0) { $0 + $1.totals.handled } == responses.count - expectedResponses.values.filter { $0.disposition == "dead-letter" }.count)
                #expect(latest.values.allSatisfy { $0.totals.rebalances >= 1 && $0.totals.commits >= 1 })

                // top, the command, against the metrics topic on the broker.
                let top = try await ChildProcess.run(
                    try BuiltBinary.path(),
                    ["top", "--bootstrap", pipeline.bootstrapServers, "--group", pipeline.group, "--iterations", "100", "--refresh", "0.1"],
                    limit: .seconds(60))
                #expect(top.exitedNormally && top.status == 0)
                let lastView = Self.lastView(of: top.output)
                for id in latest.keys {
                    #expect(lastView.contains { $0.hasPrefix(id + " ") }, "top shows worker \(id): \(lastView)")
                }
                let total = lastView.first { $0.hasPrefix("TOTAL (2 workers)") }?.split(separator: " ").map(String.init) ?? []
                // TOTAL (2 workers) PARTS IN/S OUT/S LAG IN-FLIGHT HELD P99 CONSUMED
                #expect(total.count >= 11, "top's totals line: \(lastView)")
                if total.count >= 11 {
                    #expect(total[3] == "\(2 * pipeline.partitions)", "every partition of both input topics: \(total)")
                    #expect(total[6] == "0", "no lag: \(total)")
                    #expect(total[10] == "\(consumed)", "every record consumed once: \(total)")
                }
                #expect(lastView.contains("dispositions: " + Self.dispositions(expected, deadLetters: deadLetters)), "\(lastView)")
                #expect(lastView.contains { $0.hasPrefix("actions (handledBy/reason): ") && $0.contains("contentExtension/") }, "\(lastView)")

                try await Self.expectCommitted(requests: requestEnds, responses: responseEnds, in: pipeline)
                let accounting = Accounting(pipeline.outputs, requests: requests, responses: responses)
                #expect(accounting.lost.isEmpty && accounting.duplicates == 0, "\(accounting)")
                let assignments = Self.assignments(workers, in: pipeline)
                try await Self.stopGracefully(workers, in: pipeline)
                print(RunFigures(
                    name: "metrics topic and top", requests: requests.count, responses: responses.count, workers: workers.count, kills: 0,
                    assignments: assignments, accounting: accounting, seconds: Self.seconds(since: started),
                    note: "\(Self.snapshotCount(snapshots, group: pipeline.group)) snapshots"))
            }
        }
    }
}

extension RealBrokerTests {
    /// Waits until each of `workers` has logged an assignment (it joined the group and owns partitions).
    static func waitUntilAssigned(_ workers: [String], in pipeline: Pipeline, limit: Duration = .seconds(60)) async throws {
        try await eventually("\(workers) to be assigned partitions", limit: limit) {
            workers.allSatisfy { assignments([$0], in: pipeline) > 0 }
        }
    }

    /// How many times `workers` were given partitions (`partitions assigned` logged with some; a
    /// cooperative rebalance that leaves a member's partitions as they are logs an empty one).
    static func assignments(_ workers: [String], in pipeline: Pipeline) -> Int {
        workers.reduce(0) { count, name in
            count + pipeline.log(of: name).split(separator: "\n").filter {
                $0.contains("\"partitions assigned\"") && !$0.contains("\"kafka.partitions\":\"\"")
            }.count
        }
    }

    /// Produces `requests` in slices of 2,000 in a task of its own while `during` runs (a kill, an
    /// outage), and returns where they landed with what `during` returned.
    static func produce<Result: Sendable>(
        _ requests: [TestRequest], in pipeline: Pipeline, during: @escaping @Sendable () async throws -> Result
    ) async throws -> (ends: [Int32: Int64], result: Result) {
        try await withThrowingTaskGroup(of: ([Int32: Int64], Result?).self) { group in
            group.addTask {
                var ends: [Int32: Int64] = [:]
                for slice in stride(from: 0, to: requests.count, by: 2_000) {
                    let produced = try await pipeline.produce(Array(requests[slice..<min(slice + 2_000, requests.count)]))
                    ends.merge(produced.ends, uniquingKeysWith: max)
                }
                return (ends, nil)
            }
            group.addTask { ([:], try await during()) }
            var ends: [Int32: Int64] = [:]
            var result: Result?
            for try await (produced, returned) in group {
                ends.merge(produced, uniquingKeysWith: max)
                if let returned { result = returned }
            }
            guard let result else { throw TimedOut(what: "the action during production") }
            return (ends, result)
        }
    }

    /// The checks of a run with a failure in it (a kill, an outage), at least once: nothing lost,
    /// nothing strange, outcomes and launches as offline, committed to the ends.
    static func expectAtLeastOnce(requests: [TestRequest], ends: [Int32: Int64], in pipeline: Pipeline) async throws -> Accounting {
        let accounting = Accounting(pipeline.outputs, requests: requests)
        #expect(accounting.lost.isEmpty, "lost: \(accounting.lost.prefix(3))")
        #expect(accounting.strangers == 0, "\(accounting): e.g. \(accounting.strangerExamples.prefix(3))")
        try await expectDecidedAsOffline(requests: requests, responses: [], in: pipeline, orderKept: false)
        try await expectCommitted(requests: ends, responses: [:], in: pipeline)
        return accounting
    }

    /// Every request's and response's outcome (the last, when it has duplicates) is the one the
    /// dispatcher decides offline, with launches exactly where it says (each once, unless
    /// duplicated by a failure); with `orderKept`, each device's outputs are in its records' order.
    static func expectDecidedAsOffline(
        requests: [TestRequest], responses: [TestResponse], in pipeline: Pipeline, orderKept: Bool, requestCopies: [String: Int] = [:]
    ) async throws {
        let expected = try await EndToEndTests.decideOffline(requests, configPath: pipeline.configPath)
            .merging(try await ResponsesEndToEndTests.decideOffline(responses, configPath: pipeline.configPath)) { first, _ in first }
        // A launch is produced after its first output, on its own topic: wait for those expected.
        let launchesExpected = Set(expected.filter { $0.value.launch != nil }.keys)
        do {
            try await eventually("the \(launchesExpected.count) launches read", limit: .seconds(60)) {
                launchesExpected.isSubset(of: Self.launchIDs(pipeline))
            }
        } catch {
            let missing = launchesExpected.subtracting(Self.launchIDs(pipeline))
            Issue.record("\(missing.count) launches not read (e.g. \(missing.sorted().prefix(3))): \(await pipeline.whereMissing(missing, in: [Pipeline.launches]))")
            throw error
        }
        let requestOutcomes = Outcomes(pipeline.outputs)
        let responseOutcomes = Outcomes(pipeline.outputs, of: .responses)
        let requestMismatches = requestOutcomes.mismatches(requests.map { ($0.apnsID, $0.kind.rawValue) }, expected: expected)
        #expect(requestMismatches.count == 0, "\(requestMismatches.count) request outcomes differ, e.g. \(requestMismatches.example)")
        let responseMismatches = responseOutcomes.mismatches(responses.map { ($0.traceparent, $0.kind.rawValue) }, expected: expected)
        #expect(responseMismatches.count == 0, "\(responseMismatches.count) response outcomes differ, e.g. \(responseMismatches.example)")
        let launches = Self.launchIDs(pipeline)
        #expect(Set(launches) == launchesExpected)
        if orderKept {
            // Exact copies aside (the mock cluster's, which `Accounting` counts and the fault test
            // accepts only when the worker reported no failure), and once per copy of a request
            // the requests topic holds more than once (`requestCopies`: the mock cluster's too).
            let beyond = Accounting.writtenMoreThanHeld(pipeline.outputs, topics: [Pipeline.launches], copies: requestCopies)
            #expect(beyond.isEmpty, "each launch once (\(launches.count - Set(launches).count) more, exact copies counted): \(beyond.prefix(3))")
            #expect(requestOutcomes.devicesOutOfOrder.isEmpty, "devices out of order, e.g. \(requestOutcomes.devicesOutOfOrder.first ?? "")")
            #expect(responseOutcomes.devicesOutOfOrder.isEmpty, "devices out of order, e.g. \(responseOutcomes.devicesOutOfOrder.first ?? "")")
        }
    }

    /// The launches read, by the request's `apns-id` or the response's `traceparent`.
    static func launchIDs(_ pipeline: Pipeline) -> [String] {
        pipeline.outputs.records(of: Pipeline.launches).compactMap { $0.header("traceparent") ?? $0.header("apns-id") }
    }

    /// Waits until the group's committed offsets reach the end of every partition written.
    static func expectCommitted(requests: [Int32: Int64], responses: [Int32: Int64], in pipeline: Pipeline) async throws {
        try await eventually("offsets committed to the end of both input topics", limit: .seconds(60)) {
            let requestsCommitted = try await pipeline.committedOffsets(of: Pipeline.requests)
            let responsesCommitted = responses.isEmpty ? [:] : try await pipeline.committedOffsets(of: Pipeline.responses)
            return requestsCommitted.filter { requests[$0.key] != nil } == requests
                && responsesCommitted.filter { responses[$0.key] != nil } == responses
        }
    }

    /// SIGTERM to each worker, which must exit 0 (a graceful shutdown on a real broker: commit, leave).
    static func stopGracefully(_ workers: [String], in pipeline: Pipeline) async throws {
        for name in workers {
            let worker = try #require(pipeline.worker(named: name))
            worker.send(signal: SIGTERM)
            let exit = try await worker.waitForExit(limit: .seconds(60))
            #expect(exit.exitedNormally && exit.status == 0, "\(name) log: \(pipeline.log(of: name).suffix(2_000))")
        }
    }

    /// Each worker's latest snapshot of `group` read so far, by worker id.
    static func latestSnapshots(_ collector: OutputCollector, group: String) -> [String: MetricsSnapshot] {
        var latest: [String: MetricsSnapshot] = [:]
        for snapshot in OperationsTests.snapshots(collector, group: group) { latest[snapshot.workerId] = snapshot }
        return latest
    }

    /// How many snapshots of `group` were read.
    static func snapshotCount(_ collector: OutputCollector, group: String) -> Int {
        OperationsTests.snapshots(collector, group: group).count
    }

    /// The lines of the last view `top` printed (plain lines when not on a terminal; each view
    /// starts with its title line).
    static func lastView(of output: String) -> [String] {
        let lines = output.split(separator: "\n").map(String.init)
        guard let start = lines.lastIndex(where: { $0.hasPrefix("notification-dispatcher top") }) else { return [] }
        return Array(lines[start...])
    }

    /// The `dispositions:` text of top's view for the outcomes `expected`.
    static func dispositions(_ expected: [String: Outcome], deadLetters: Int) -> String {
        var counts: [String: Int] = [:]
        for outcome in expected.values where outcome.disposition != "dead-letter" { counts[outcome.disposition, default: 0] += 1 }
        return (counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" } + ["dead-letter \(deadLetters)"]).joined(separator: " | ")
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
