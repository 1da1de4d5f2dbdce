import ArgumentParser
import ChildProcesses
import Dispatcher
import DispatcherService
import DispatcherTools
import Foundation
import JSON
import Kafka
import Logging
import Notifications
import Records
import ServiceExtensions
import Synchronization

extension BenchCommand {
    /// `bench run`: the worker's benchmarks against the embedded broker (or `--bootstrap`).
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run",
            abstract: "Run the worker benchmarks: dispatcher, produce, baseline, gate-only, latency, extensions, worker-memory, deadline, scaling.",
            discussion: "Build with `swift build -c release` for figures that mean something; --quick is a smoke run."
        )

        /// Every scenario, in the order they run.
        static let scenarios = ["dispatcher", "produce", "baseline", "gate-only", "latency", "extensions", "worker-memory", "deadline", "live-activities", "scaling"]

        @Flag(help: "Small counts and short runs (CI).")
        var quick = false

        @Option(name: .customLong("scenario"), help: "Run only these scenarios (repeatable).")
        var only: [String] = []

        @Option(help: "Kafka bootstrap servers of a real cluster; default: an embedded broker.")
        var bootstrap: String?

        @Option(help: "Records per throughput scenario (default 100,000; --quick 2,000).")
        var records: Int?

        @Option(help: "Input rate of the latency scenario, records per second.")
        var rate: Int = 5_000

        @Option(help: "Seconds the latency scenario sends at --rate, after a 2 s warm-up.")
        var duration: Int = 20

        @Option(help: "Webhook response time of the extensions scenario, in milliseconds.")
        var latency: Int = 1_000

        @Option(help: "The workers' dispatch.guarantee: at-least-once or exactly-once.")
        var guarantee: String = DeliveryGuarantee.atLeastOnce.rawValue

        @Option(help: "Partitions of each topic (default: 64; the latency scenario 12, the deployed layout).")
        var partitions: Int32?

        /// Partitions of the throughput scenarios' topics when `--partitions` is not given: room for
        /// 100,000 and more preloaded requests under the embedded broker's 5 MiB per partition.
        static let throughputPartitions: Int32 = 64

        /// Partitions of the latency scenario's topics when `--partitions` is not given: the deployed
        /// layout (deploy/compose/create-topics.sh). At 5,000 requests/s over 64 partitions the input's
        /// producer sends about one record per message set, and the embedded broker walks every
        /// message set of a partition on each fetch (`rd_kafka_mock_msgset_find`), so its cost, not
        /// the worker's, sets the latency after a few seconds (docs/performance.md, "Latency at 5,000/s").
        static let latencyPartitions: Int32 = 12

        @Option(help: "Also write the results as JSON to this file.")
        var json: String?

        func validate() throws {
            for name in only where !Self.scenarios.contains(name) {
                throw ValidationError("unknown scenario \(name); one of \(Self.scenarios.joined(separator: ", "))")
            }
            guard rate > 0, latency >= 0, partitions.map({ $0 > 0 }) ?? true, duration > 0 else {
                throw ValidationError("--rate, --latency, --duration and --partitions must be positive")
            }
            guard DeliveryGuarantee(rawValue: guarantee) != nil else {
                throw ValidationError("--guarantee must be one of: \(DeliveryGuarantee.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            // Found out before the scenarios run, not after.
            try NamedFile.validateOutput(json, role: "results file", option: "--json")
        }

        func run() async throws {
            let openFiles = raiseOpenFileLimit(to: 65_536)
            let delivery = DeliveryGuarantee(rawValue: guarantee) ?? .atLeastOnce
            let kafka = try BenchKafka(bootstrap: bootstrap, partitions: partitions ?? Self.throughputPartitions, guarantee: delivery)
            let latencyPartitions = partitions ?? Self.latencyPartitions
            let count = records ?? (quick ? 2_000 : 100_000)
            print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores; broker: \(bootstrap ?? "embedded (3 brokers, this process)"); partitions \(kafka.partitions) (latency \(latencyPartitions)); open files \(openFiles); guarantee \(delivery.rawValue)")
            var results: [(String, JSONValue)] = []
            var baseline: Double?
            for scenario in Self.scenarios where only.isEmpty || only.contains(scenario) {
                let result: JSONValue
                switch scenario {
                case "dispatcher": result = try await Scenarios.dispatcherAlone(count: quick ? 20_000 : 500_000)
                case "baseline":
                    // 300-byte records for the pass-through's own rate; the gate-only mix for the
                    // ratio, which must compare the same records with and without dispatching.
                    let small = try await Scenarios.baseline(kafka, count: count, size: 300)
                    let mixed = try await Scenarios.baseline(kafka, count: count, size: nil)
                    baseline = mixed
                    result = .object(JSONObject([
                        ("recordsPerSecond", .number(JSONNumber(small))), ("mixRecordsPerSecond", .number(JSONNumber(mixed))),
                    ]))
                case "gate-only": result = try await Scenarios.gateOnly(kafka, count: count, baseline: baseline)
                case "produce": result = try await Scenarios.produce(kafka, count: count)
                case "latency":
                    result = try await Scenarios.latency(kafka, rate: rate, seconds: quick ? 2 : duration, partitions: latencyPartitions)
                case "extensions":
                    result = try await Scenarios.extensions(kafka, count: quick ? 500 : 30_000, latency: .milliseconds(latency), quick: quick)
                case "worker-memory":
                    result = try await Scenarios.workerMemory(kafka, count: quick ? 500 : 40_000, latency: .milliseconds(latency))
                case "deadline": result = try await Scenarios.deadline(kafka, count: quick ? 50 : 2_000)
                case "live-activities": result = try await Scenarios.liveActivities(kafka, count: quick ? 2_000 : 100_000)
                default: result = try await Scenarios.scaling(kafka, count: count)
                }
                results.append((scenario, result))
            }
            kafka.cluster?.shutdown()
            if let json {
                let document = JSONValue.object(JSONObject(results))
                try Data(document.serialized()).write(to: URL(fileURLWithPath: json))
            }
        }
    }
}

/// The scenarios of `bench run`: each prints its line of the table and returns its JSON.
enum Scenarios {
    static let bundleID = "com.example.bench"
    /// An app with no service extension: every record is decided without one (gate-only).
    static let plainApp = apps([bundleID])

    /// An app whose every notification goes to the webhook at `url`.
    static func webhookApp(url: String) -> String {
        "  \(bundleID):\n    serviceExtension:\n      kind: webhook\n      url: \(url)\n"
    }

    /// Validated and gated records per second per core, the dispatcher alone (no Kafka).
    static func dispatcherAlone(count: Int) async throws -> JSONValue {
        let configuration = try Configuration(yaml: "apps:\n\(plainApp)", environment: [:])
        let dispatcher = try Dispatcher(configuration: configuration, registry: ExtensionRegistry())
        let corpus = BenchRequest.mix(count: 4_096, bundleID: bundleID, size: nil).map { request in
            RequestRecord(
                key: request.key, headers: request.headers,
                value: request.value, source: TopicPartitionOffset(topic: "bench", partition: 0, offset: 0))
        }
        let lookup = AppStatesTable()
        let startCPU = BenchLoop.threadCPUTime()
        let start = ContinuousClock.now
        var outputs = 0
        for index in 0..<count {
            let result = await dispatcher.dispatch(corpus[index % corpus.count], appStates: lookup, receivedAt: Date())
            outputs += result.outputs.count
        }
        let wall = ContinuousClock.now - start
        let cpu = BenchLoop.threadCPUTime() - startCPU
        let perSecond = Double(count) / max(wall.milliseconds / 1_000, 1e-9)
        print(String(format: "dispatcher   %9.0f records/s (one task; wall %.2f s, thread CPU %.2f s; %d outputs)", perSecond, wall.milliseconds / 1_000, cpu, outputs))
        return .object(JSONObject([("recordsPerSecond", .number(JSONNumber(perSecond))), ("records", .number(JSONNumber(count)))]))
    }

    /// The producer alone: 300-byte records sent in batches of 1,000, as many batches in flight as
    /// the worker's `maxInFlight` allows. The other half of the baseline's cost is the consumer.
    static func produce(_ kafka: BenchKafka, count: Int) async throws -> JSONValue {
        let topics = try await kafka.makeTopics("produce")
        let records = BenchRequest.mix(count: count, bundleID: bundleID, size: 300).map { $0.record(topic: topics.requests) }
        let configuration = try kafka.configuration(topics: topics, apps: plainApp)
        let settings = kafka.settings(configuration)
        let producer = try KafkaProducer(configuration: settings.producer, logger: kafka.logger)
        try await producer.checkConnection(timeout: .seconds(10))
        let inFlight = settings.maxInFlight / 1_000
        let start = Throughput.Start()
        let failures = await withTaskGroup(of: Int.self) { group in
            var failures = 0
            var running = 0
            for first in stride(from: 0, to: records.count, by: 1_000) {
                let batch = Array(records[first..<min(first + 1_000, records.count)])
                group.addTask { await producer.send(batch).count { if case .failure = $0 { true } else { false } } }
                running += 1
                if running >= inFlight, let failed = await group.next() {
                    failures += failed
                    running -= 1
                }
            }
            for await failed in group { failures += failed }
            return failures
        }
        let throughput = start.finish(records: count)
        await producer.shutdown()
        print(String(format: "produce      %9.0f records/s (%d failed; %.1f cores busy)", throughput.perSecond, failures, throughput.coresBusy))
        return .object(JSONObject([("recordsPerSecond", .number(JSONNumber(throughput.perSecond)))]))
    }

    /// The raw pass-through on the same Kafka layer: consume, produce unchanged, commit. No dispatch.
    /// - Parameter size: the records' size, or nil for the gate-only mix (200–4096 bytes).
    /// - Returns: records per second.
    static func baseline(_ kafka: BenchKafka, count: Int, size: Int?) async throws -> Double {
        let topics = try await kafka.makeTopics("baseline")
        let requests = BenchRequest.mix(count: count, bundleID: bundleID, size: size)
        try await kafka.preload(requests, topic: topics.requests)
        let configuration = try kafka.configuration(topics: topics, apps: plainApp)
        let settings = kafka.settings(configuration)
        let producer = try KafkaProducer(configuration: settings.producer, logger: kafka.logger)
        // Warm up: the producer's first send waits for metadata and a producer id (most of a
        // second on the embedded broker); the worker's clock starts after its first, too.
        _ = await producer.send([ProducerRecord(topic: topics.deliveries, key: nil, value: Array("warm-up".utf8), headers: [])])
        let consumer = try KafkaConsumer(configuration: settings.effectiveConsumer, logger: kafka.logger)
        try consumer.subscribe(topics: [topics.requests])
        guard let deliveries = producer.topic(named: topics.deliveries) else { throw BenchError("the producer stopped") }
        // Like the worker: batches of the same size, lent in place, each record produced from its
        // message's own bytes (librdkafka copies them) and the batch's delivery reports awaited
        // once in a task of its own, at most `maxInFlight` records in flight (the worker holds its
        // intake there; here the loop stops taking events, and the consumer stops polling).
        var done = 0
        var first: Throughput.Start?
        var highest: [TopicPartition: Int64] = [:]
        var lastCommit = ContinuousClock.now
        await withTaskGroup(of: Int.self) { group in
            var inFlight = 0
            for await event in consumer.events {
                switch event {
                case .lent(let batch):
                    if first == nil { first = Throughput.Start() }
                    let outputs = producer.openLentOutputs(capacity: batch.count)
                    for index in 0..<batch.count {
                        while true {
                            let attempt = batch.withRecordView(at: index) { view in
                                view.withUnsafeKeyBytes { key in
                                    view.withUnsafeValueBytes { value in
                                        view.withUnsafeHeaders { headers in
                                            outputs.produce(to: deliveries, partition: nil, key: key, value: value, headers: headers)
                                        }
                                    }
                                }
                            }
                            guard case .queueFull = attempt else { break }
                            await outputs.waitForQueueSpace()
                        }
                        highest[TopicPartition(topic: batch.topic(at: index), partition: batch.partition(at: index))] = batch.offset(at: index) + 1
                    }
                    outputs.close()
                    group.addTask {
                        await outputs.waitForAll()
                        return batch.count
                    }
                    inFlight += batch.count
                    while inFlight >= settings.maxInFlight, let finished = await group.next() {
                        inFlight -= finished
                        done += finished
                    }
                case .revoked(let partitions): consumer.releaseRevoked(partitions)
                default: break
                }
                if ContinuousClock.now - lastCommit > settings.commitInterval {
                    consumer.commitAsync(highest.map { TopicPartitionOffset(topic: $0.key.topic, partition: $0.key.partition, offset: $0.value) })
                    lastCommit = .now
                }
                if done + inFlight >= count { break }
            }
            for await finished in group { done += finished }
        }
        let throughput = (first ?? Throughput.Start()).finish(records: done)
        await consumer.close()
        await producer.shutdown()
        let label = size.map { "\($0)-byte records" } ?? "the gate-only mix"
        print(String(format: "baseline     %9.0f records/s (pass-through of %@ lent in place, same producer and commits; %.1f cores busy)", throughput.perSecond, label, throughput.coresBusy))
        return throughput.perSecond
    }

    /// The full worker on records that need no extension.
    static func gateOnly(_ kafka: BenchKafka, count: Int, baseline: Double?, size: Int? = nil, workers: Int = 1, label: String = "gate-only") async throws -> JSONValue {
        let topics = try await kafka.makeTopics("gate")
        try await kafka.preload(BenchRequest.mix(count: count, bundleID: bundleID, size: size), topic: topics.requests)
        let configuration = try kafka.configuration(topics: topics, apps: plainApp)
        let throughput = try await kafka.runWorkers(workers, configuration: configuration, registry: ExtensionRegistry(), expected: count)
        let cpuPerRecord = throughput.records > 0 ? throughput.cpuSeconds / Double(throughput.records) * 1e6 : 0
        var fields: [(String, JSONValue)] = [
            ("recordsPerSecond", .number(JSONNumber(throughput.perSecond))), ("cpuMicrosecondsPerRecord", .number(JSONNumber(cpuPerRecord))),
        ]
        var ratio = ""
        if let baseline, baseline > 0 {
            fields.append(("ratioToBaseline", .number(JSONNumber(throughput.perSecond / baseline))))
            ratio = String(format: ", %.0f%% of baseline", 100 * throughput.perSecond / baseline)
        }
        print(String(format: "%@ %9.0f records/s%@ (%.1f cores busy, %.0f µs CPU per record, peak %d in flight)", label.padding(toLength: 12, withPad: " ", startingAt: 0), throughput.perSecond, ratio, throughput.coresBusy, cpuPerRecord, throughput.peakInFlight))
        return .object(JSONObject(fields))
    }

    /// The full worker at a fixed input rate: end-to-end latency percentiles.
    static func latency(_ kafka: BenchKafka, rate: Int, seconds: Int, partitions: Int32) async throws -> JSONValue {
        let topics = try await kafka.makeTopics("latency", partitions: partitions)
        let configuration = try kafka.configuration(topics: topics, apps: plainApp)
        let requests = BenchRequest.mix(count: rate * (seconds + 2), bundleID: bundleID, size: nil)
        return try await measureLatency(
            kafka, configuration: configuration, registry: ExtensionRegistry(), requests: requests, warmUp: rate * 2, rate: rate
        ) { percentiles, _ in
            print("latency      at \(rate)/s: \(percentiles.text)")
        }
    }

    /// Webhook extensions answering after `latency`, with `maxInFlight` 10,000.
    static func extensions(_ kafka: BenchKafka, count: Int, latency: Duration, quick: Bool) async throws -> JSONValue {
        try await withWebhook(delay: latency) { url in
            let topics = try await kafka.makeTopics("extensions")
            let configuration = try kafka.configuration(topics: topics, apps: webhookApp(url: url), dispatch: "  maxInFlight: 10000\n")
            // Warm-up: 10,000 requests in flight need 10,000 connections. Opened all at once they
            // overflow the loopback accept queue (somaxconn), and retransmitted SYNs (1 s, 3 s,
            // 7 s...) dominate; ramping up opens them as a long-running worker would have.
            let warmUp = quick ? 500 : 25_000
            let requests = (0..<count + warmUp).map { BenchRequest.mutableAlert($0, bundleID: bundleID) }
            resetPeakResident()
            let memoryBefore = peakResidentMegabytes()
            return try await BuiltInExtensions.withRegistry { registry in
                try await measureLatency(
                    kafka, configuration: configuration, registry: registry, requests: requests, warmUp: warmUp,
                    warmUpPace: .ramp(to: quick ? 500 : 10_000, seconds: 5), rate: nil
                ) { percentiles, throughput in
                    // The CPU is this whole process's (worker, embedded broker, producer of the
                    // input); `worker-memory` measures the worker's alone.
                    print(String(format: "extensions   %9.0f records/s with %.0f ms webhooks (%.0f µs CPU of this process per record); peak RSS %.0f MB (before: %.0f MB); %@",
                                 throughput.perSecond, latency.milliseconds, throughput.cpuSeconds / Double(max(throughput.records, 1)) * 1e6,
                                 peakResidentMegabytes(), memoryBefore, percentiles.text))
                }
            }
        }
    }

    /// The extensions scenario's worker alone: `serve` in a process of its own (`maxInFlight`
    /// 10,000, webhooks answering after `latency`) works through a backlog of `count` requests;
    /// its peak resident memory, read from `/proc`, is the worker's own, without the embedded
    /// broker's copy of every record that this process holds.
    static func workerMemory(_ kafka: BenchKafka, count: Int, latency: Duration) async throws -> JSONValue {
        try await withWebhook(delay: latency) { url in
            let topics = try await kafka.makeTopics("memory")
            let requests = (0..<count).map { BenchRequest.mutableAlert($0, bundleID: bundleID) }
            try await kafka.preload(requests, topic: topics.requests)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let start = Throughput.Start()
            let worker = try startServe(
                binary: try ProductBinary.beside(), bootstrap: kafka.bootstrapServers, groupId: "bench-memory-\(UUID().uuidString.prefix(8))",
                topics: topics, apps: webhookApp(url: url), dispatch: "  maxInFlight: 10000\n", in: directory)
            // The worker's CPU and deliveries when half are there: the second half's calls run on
            // connections the first half opened, as a long-running worker's do.
            let half = HalfwayMark()
            let pid = worker.pid
            try await countDeliveries(kafka, topic: topics.deliveries, until: count, limit: .seconds(600), unlessExited: worker) { seen in
                half.record(cpuSeconds: processCPUSeconds(pid), deliveries: seen)
            }
            let throughput = start.finish(records: count)
            let peak = peakResidentMegabytes(of: worker.pid)
            // The worker's own CPU (user + system) per webhook call, without the broker's or the
            // webhook's: what docs/performance.md bounds (at most 100 µs). From start-up (10,000 connections
            // opened for 40,000 calls), and over the second half (kept-alive connections).
            let cpuSeconds = processCPUSeconds(worker.pid)
            let cpuMicroseconds = cpuSeconds / Double(max(count, 1)) * 1e6
            let (halfCPU, halfSeen) = half.reading
            // No second-half figure rather than a wrong one: when the deliveries that crossed the
            // halfway mark were the last (a small run's calls answer all at once), there is no
            // second half to divide by; and /proc counts CPU in clock ticks (10 ms), so a second
            // half that took fewer than ten of them has no figure worth a digit.
            let secondHalfCPU = cpuSeconds - halfCPU
            let steadyMicroseconds = halfSeen < count && secondHalfCPU >= 10 * processCPUTick ? secondHalfCPU / Double(count - halfSeen) * 1e6 : nil
            _ = try await worker.stop()
            let steadyText = steadyMicroseconds.map { String(format: "%.0f µs over the second half", $0) }
                ?? (halfSeen < count
                    ? "no second-half figure (its calls took under ten of /proc's CPU ticks)"
                    : "no second-half figure (the calls past halfway all answered in one batch)")
            print(String(format: "worker alone %9.0f records/s with %.0f ms webhooks, from start-up; peak RSS of serve %.0f MB; "
                            + "CPU of serve per call %.0f µs from start-up, %@",
                         throughput.perSecond, latency.milliseconds, peak, cpuMicroseconds, steadyText))
            var fields: [(String, JSONValue)] = [
                ("recordsPerSecond", .number(JSONNumber(throughput.perSecond))), ("peakResidentMegabytes", .number(JSONNumber(peak))),
                ("cpuMicrosecondsPerCall", .number(JSONNumber(cpuMicroseconds))),
            ]
            if let steadyMicroseconds { fields.append(("cpuMicrosecondsPerCallSecondHalf", .number(JSONNumber(steadyMicroseconds)))) }
            return .object(JSONObject(fields))
        }
    }

    /// Starts `serve` (of `binary`) in a process of its own, configured for `topics` on
    /// `bootstrap` with `apps`, its health port chosen by the kernel (`http.port: 0`, so that it
    /// never collides), logging only errors; SIGTERM shuts it down gracefully and it exits 0.
    /// - Parameters:
    ///   - dispatch: lines of the `dispatch` section, each indented by two spaces.
    ///   - properties: librdkafka properties for its consumer and producer.
    ///   - directory: where its configuration file is written.
    static func startServe(
        binary: String, bootstrap: String, groupId: String, topics: TopicSettings, apps: String, dispatch: String = "",
        properties: [String: String] = [:], in directory: URL, launch: ContenderLaunch = .plain
    ) throws -> BenchChild {
        let configFile = directory.appendingPathComponent("serve.yaml")
        var yaml = "kafka:\n  bootstrapServers: \(bootstrap)\n  groupId: \(groupId)\n"
        if !properties.isEmpty {
            yaml += "  properties:\n" + properties.sorted { $0.key < $1.key }.map { "    \($0.key): \"\($0.value)\"\n" }.joined()
        }
        yaml += "topics:\n"
        for (key, name) in [("requests", topics.requests), ("deliveries", topics.deliveries), ("launches", topics.launches),
                            ("deadLetter", topics.deadLetter), ("metrics", topics.metrics), ("responses", topics.responses),
                            ("actions", topics.actions), ("feedback", topics.feedback), ("devices", topics.devices ?? ""),
                            ("channels", topics.channels), ("activities", topics.activities), ("stored", topics.stored),
                            ("activityRepartition", topics.activityRepartition)] {
            yaml += "  \(key): \(name)\n"
        }
        if !dispatch.isEmpty || !launch.serveDispatch.isEmpty { yaml += "dispatch:\n" + dispatch + launch.serveDispatch }
        yaml += launch.serveSections
        yaml += "http:\n  port: 0\napps:\n" + apps
        try Data(yaml.utf8).write(to: configFile)
        return try launch.child(name: "serve", executable: binary, arguments: ["serve", "--config", configFile.path, "--log-level", "error"])
    }

    /// The `apps` section for `bundleIDs`, none with a service extension (gate-only), each in
    /// `appState` unless the app-states table says otherwise.
    static func apps(_ bundleIDs: [String], appState: BenchAppState = .background) -> String {
        bundleIDs.map { "  \($0):\n    defaultAppState: \(appState.rawValue)\n" }.joined()
    }

    /// Reads `topic` from the start until `count` records are there.
    /// - Parameter worker: the process writing them, should it stop first.
    /// - Parameter halfway: called once, with the count seen, when half of `count` are there.
    static func countDeliveries(
        _ kafka: BenchKafka, topic: String, until count: Int, limit: Duration, unlessExited worker: BenchChild,
        halfway: (@Sendable (Int) -> Void)? = nil
    ) async throws {
        let consumer = try KafkaConsumer(
            configuration: ConsumerConfiguration(bootstrapServers: kafka.bootstrapServers, groupID: "bench-count-\(UUID().uuidString.prefix(8))"),
            logger: kafka.logger)
        try consumer.subscribe(topics: [topic])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var seen = 0
                var halfwayCalled = false
                for await event in consumer.events {
                    guard case .messages(let messages) = event else { continue }
                    seen += messages.count
                    if !halfwayCalled, seen >= count / 2 {
                        halfwayCalled = true
                        halfway?(seen)
                    }
                    if seen >= count { return }
                }
            }
            group.addTask {
                try await Task.sleep(for: limit)
                throw BenchError("fewer than \(count) deliveries within \(limit)")
            }
            group.addTask {
                while worker.exitUsage() == nil { try await Task.sleep(for: .milliseconds(50)) }
                throw BenchError("serve \(worker.exitUsage()?.description ?? "exited") before writing \(count) deliveries\(worker.logTail)")
            }
            try await group.next()
            group.cancelAll()
        }
        await consumer.close()
    }

    /// Webhooks that never answer, deadline 1 s, grace 200 ms: how late past both the original comes.
    static func deadline(_ kafka: BenchKafka, count: Int) async throws -> JSONValue {
        try await withWebhook(delay: .seconds(3_600)) { url in
            let topics = try await kafka.makeTopics("deadline")
            let configuration = try kafka.configuration(
                topics: topics, apps: webhookApp(url: url), dispatch: "  deadline: 1s\n  expiryGrace: 200ms\n")
            let requests = (0..<count + 200).map { BenchRequest.mutableAlert($0, bundleID: bundleID) }
            return try await BuiltInExtensions.withRegistry { registry in
                try await measureLatency(
                    kafka, configuration: configuration, registry: registry, requests: requests, warmUp: 200, rate: 200,
                    offset: .milliseconds(1_200)
                ) { percentiles, _ in
                    print("deadline     late past deadline + grace: \(percentiles.text)")
                }
            }
        }
    }

    /// Gate-only with 1, 2 and 4 workers, and against payload size.
    static func scaling(_ kafka: BenchKafka, count: Int) async throws -> JSONValue {
        var fields: [(String, JSONValue)] = []
        for workers in [1, 2, 4] {
            fields.append(("workers\(workers)", try await gateOnly(kafka, count: count, baseline: nil, workers: workers, label: "\(workers) worker(s)")))
        }
        for size in [300, 1_024, 4_096] {
            let fitting = kafka.fitting(count, size: size)
            fields.append(("bytes\(size)", try await gateOnly(kafka, count: fitting, baseline: nil, size: size, label: "\(size) B")))
        }
        return .object(JSONObject(fields))
    }

    /// Runs one worker and measures each request's end-to-end latency as the worker itself sees
    /// it (the request's producer timestamp to its outputs acknowledged), minus `offset`.
    ///
    /// The first `warmUp` requests are sent and finished before measuring, so the group join, the
    /// producer's first metadata and producer-id requests and, for webhooks, the first connections
    /// stay out of the figures. Requests are sent at `rate` per second (in 1 ms ticks), or all at once.
    private static func measureLatency(
        _ kafka: BenchKafka, configuration: Configuration, registry: ExtensionRegistry, requests: [BenchRequest],
        warmUp: Int, warmUpPace: Pace? = nil, rate: Int?, offset: Duration = .zero, report: (Percentiles, Throughput) -> Void
    ) async throws -> JSONValue {
        let recorder = LatencyRecorder()
        let dispatcher = try Dispatcher(configuration: configuration, registry: registry)
        let worker = try DispatchWorker(
            settings: kafka.settings(configuration), dispatcher: dispatcher, logger: kafka.logger, metrics: recorder.workerMetrics())
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: kafka.bootstrapServers), logger: kafka.logger)
        let topic = configuration.topics.requests
        let result: JSONValue = try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await worker.run() }
            try await waitUntil(limit: .seconds(60)) { worker.statistics.assignedPartitions > 0 }
            let warmUpRequests = requests.prefix(warmUp)
            let measured = requests.dropFirst(warmUp)
            await send(warmUpRequests, topic: topic, pace: warmUpPace ?? Pace(rate), with: producer)
            try await waitUntil(limit: .seconds(120)) { worker.statistics.accountedFor >= warmUpRequests.count }
            recorder.start()
            let start = Throughput.Start()
            await send(measured, topic: topic, pace: Pace(rate), with: producer)
            try await waitUntil(limit: .seconds(600)) { worker.statistics.accountedFor >= requests.count }
            let throughput = start.finish(records: measured.count)
            let percentiles = Percentiles(recorder.sorted.map { $0 - offset })
            let peak = peakResidentMegabytes()
            report(percentiles, throughput)
            group.cancelAll()
            return .object(JSONObject([
                ("latency", percentiles.json), ("recordsPerSecond", .number(JSONNumber(throughput.perSecond))),
                ("measured", .number(JSONNumber(recorder.count))), ("peakResidentMegabytes", .number(JSONNumber(peak))),
            ]))
        }
        await producer.shutdown()
        return result
    }

    /// How fast requests are sent.
    enum Pace {
        /// All at once, in batches of 1,000.
        case allAtOnce
        /// This many per second.
        case constant(Int)
        /// From 0 up to this many per second over `seconds`, then at that rate.
        case ramp(to: Int, seconds: Double)

        init(_ rate: Int?) { self = rate.map { .constant($0) } ?? .allAtOnce }

        /// How many requests are due after `elapsed` seconds.
        func due(after elapsed: Double) -> Int {
            switch self {
            case .allAtOnce: return .max
            case .constant(let rate): return Int(elapsed * Double(rate)) + 1
            case .ramp(let rate, let seconds):
                let rampEnd = Double(rate) * seconds / 2
                if elapsed < seconds { return Int(Double(rate) * elapsed * elapsed / (2 * seconds)) + 1 }
                return Int(rampEnd + (elapsed - seconds) * Double(rate)) + 1
            }
        }
    }

    /// Sends `requests` at `pace`: what is due every millisecond as one batch (all at once: in
    /// batches of 1,000), each batch in a child task so sending never waits for acknowledgements;
    /// returns once every batch is acknowledged.
    ///
    /// A discarding group: a plain task group keeps each finished child until it is awaited, and
    /// thousands of them made every later send slower (the latency drifted up over a run).
    private static func send(_ requests: ArraySlice<BenchRequest>, topic: String, pace: Pace, with producer: KafkaProducer) async {
        let records = requests.map { $0.record(topic: topic) }
        let clock = ContinuousClock()
        let start = clock.now
        await withDiscardingTaskGroup { group in
            var sent = 0
            while sent < records.count {
                let due = min(records.count, sent + 1_000, pace.due(after: (clock.now - start).milliseconds / 1_000))
                if due > sent {
                    let batch = Array(records[sent..<due])
                    group.addTask { _ = await producer.send(batch) }
                    sent = due
                }
                if case .allAtOnce = pace { continue }
                try? await clock.sleep(for: .milliseconds(1))
            }
        }
    }

    /// Polls `condition` every 5 ms (a benchmark's progress check, not a test's synchronisation).
    private static func waitUntil(limit: Duration, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < deadline else { throw BenchError("a benchmark step did not finish within \(limit)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Runs the loopback webhook of `bench webhook` in a process of its own for `body`: the worker
    /// holds one connection per call in flight (up to 10,000), and with the server's ends in the
    /// same process the two would need twice the descriptors.
    private static func withWebhook<Result: Sendable>(delay: Duration, _ body: (String) async throws -> Result) async throws -> Result {
        let server = try BenchChild(
            name: "webhook", executable: ProductBinary.ownPath,
            arguments: ["webhook", "--delay-ms", String(Int(delay.milliseconds))], captureOutput: true)
        // The server prints `port: N` once it listens.
        guard let port = Int(try await server.announcement("port: ")), port > 0 else {
            throw BenchError("the webhook server did not start\(server.logTail)")
        }
        let result = try await body("http://127.0.0.1:\(port)/hook")
        _ = try await server.stop()
        return result
    }
}

/// The worker's CPU seconds and the deliveries counted when half of them were there.
final class HalfwayMark: Sendable {
    private let values = Mutex((cpuSeconds: 0.0, deliveries: 0))

    func record(cpuSeconds: Double, deliveries: Int) { values.withLock { $0 = (cpuSeconds, deliveries) } }
    var reading: (cpuSeconds: Double, deliveries: Int) { values.withLock { $0 } }
}

/// Raises the open-file limit towards `wanted` (the extensions scenario holds a webhook
/// connection per request in flight, besides the embedded broker's sockets); returns the limit
/// in force.
private func raiseOpenFileLimit(to wanted: rlim_t) -> rlim_t {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    guard limit.rlim_cur < wanted else { return limit.rlim_cur }
    var raised = limit
    raised.rlim_cur = wanted
    raised.rlim_max = max(limit.rlim_max, wanted)
    // Raising the hard limit needs privileges; without them, take the hard limit.
    if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) != 0 {
        raised.rlim_cur = min(wanted, limit.rlim_max)
        raised.rlim_max = limit.rlim_max
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 else { return limit.rlim_cur }
    }
    return raised.rlim_cur
}
