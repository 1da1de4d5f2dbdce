import ArgumentParser
import Dispatcher
import DispatcherService
import Foundation
import Hummingbird
import Kafka
import Logging
import Notifications
import ServiceExtensions
import Synchronization

extension BenchCommand {
    /// `bench run`: the worker's benchmarks against the embedded broker (or `--bootstrap`).
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run",
            abstract: "Run the worker benchmarks: baseline, gate-only, latency, extensions, deadline, scaling, dispatcher.",
            discussion: "Build with `swift build -c release` for figures that mean something; --quick is a smoke run."
        )

        /// Every scenario, in the order they run.
        static let scenarios = ["dispatcher", "baseline", "gate-only", "latency", "extensions", "deadline", "scaling"]

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

        @Option(help: "Webhook response time of the extensions scenario, in milliseconds.")
        var latency: Int = 1_000

        @Option(help: "Partitions of each topic.")
        var partitions: Int32 = 64

        @Option(help: "Also write the results as JSON to this file.")
        var json: String?

        func validate() throws {
            for name in only where !Self.scenarios.contains(name) {
                throw ValidationError("unknown scenario \(name); one of \(Self.scenarios.joined(separator: ", "))")
            }
            guard rate > 0, latency >= 0, partitions > 0 else { throw ValidationError("--rate, --latency and --partitions must be positive") }
        }

        func run() async throws {
            let kafka = try BenchKafka(bootstrap: bootstrap, partitions: partitions)
            let count = records ?? (quick ? 2_000 : 100_000)
            print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores; broker: \(bootstrap ?? "embedded (3 brokers, this process)"); partitions \(partitions)")
            var results: [(String, JSONValue)] = []
            var baseline: Double?
            for scenario in Self.scenarios where only.isEmpty || only.contains(scenario) {
                let result: JSONValue
                switch scenario {
                case "dispatcher": result = try await Scenarios.dispatcherAlone(count: quick ? 20_000 : 500_000)
                case "baseline":
                    let (value, rate) = try await Scenarios.baseline(kafka, count: count)
                    baseline = rate
                    result = value
                case "gate-only": result = try await Scenarios.gateOnly(kafka, count: count, baseline: baseline)
                case "latency": result = try await Scenarios.latency(kafka, rate: rate, seconds: quick ? 2 : 20)
                case "extensions":
                    result = try await Scenarios.extensions(kafka, count: quick ? 500 : 30_000, latency: .milliseconds(latency))
                case "deadline": result = try await Scenarios.deadline(kafka, count: quick ? 50 : 2_000)
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
    static let plainApp = "  \(bundleID):\n    defaultAppState: background\n"

    /// Validated and gated records per second per core, the dispatcher alone (no Kafka).
    static func dispatcherAlone(count: Int) async throws -> JSONValue {
        let configuration = try Configuration(yaml: "apps:\n\(plainApp)", environment: [:])
        let dispatcher = try Dispatcher(configuration: configuration, registry: ExtensionRegistry())
        let corpus = BenchRequest.mix(count: 4_096, bundleID: bundleID, size: nil).map { request in
            RequestRecord(
                key: request.key, headers: request.headers.map { RecordHeader(name: $0.name, value: $0.value) },
                value: request.value, source: RecordSource(topic: "bench", partition: 0, offset: 0))
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

    /// The raw pass-through on the same Kafka layer: consume, produce unchanged, commit. No dispatch.
    static func baseline(_ kafka: BenchKafka, count: Int) async throws -> (JSONValue, Double) {
        let topics = try kafka.makeTopics("baseline")
        let requests = BenchRequest.mix(count: count, bundleID: bundleID, size: 300)
        try await kafka.preload(requests, topic: topics.requests)
        let configuration = try kafka.configuration(topics: topics, apps: plainApp)
        let settings = kafka.settings(configuration)
        let producer = try KafkaProducer(configuration: settings.producer, logger: kafka.logger)
        let consumer = try KafkaConsumer(configuration: settings.consumer, logger: kafka.logger)
        try consumer.subscribe(topics: [topics.requests])
        var done = 0
        var first: (ContinuousClock.Instant, Int)?
        var highest: [TopicPartition: Int64] = [:]
        var lastCommit = ContinuousClock.now
        for await event in consumer.events {
            switch event {
            case .messages(let messages):
                let records = messages.map {
                    ProducerRecord(topic: topics.deliveries, key: $0.key, value: $0.value, headers: $0.headers)
                }
                let results = await producer.send(records)
                done += results.count
                if first == nil { first = (.now, done) }
                for message in messages {
                    highest[TopicPartition(topic: message.topic, partition: message.partition)] = message.offset + 1
                }
            case .revoked(let partitions): consumer.releaseRevoked(partitions)
            default: break
            }
            if ContinuousClock.now - lastCommit > settings.commitInterval {
                consumer.commitAsync(highest.map { TopicPartitionOffset(topic: $0.key.topic, partition: $0.key.partition, offset: $0.value) })
                lastCommit = .now
            }
            if done >= count { break }
        }
        let throughput = Throughput(records: done - (first?.1 ?? 0), elapsed: ContinuousClock.now - (first?.0 ?? .now))
        await consumer.close()
        await producer.shutdown()
        print(String(format: "baseline     %9.0f records/s (pass-through, same producer and commits)", throughput.perSecond))
        return (.object(JSONObject([("recordsPerSecond", .number(JSONNumber(throughput.perSecond)))])), throughput.perSecond)
    }

    /// The full worker on records that need no extension.
    static func gateOnly(_ kafka: BenchKafka, count: Int, baseline: Double?, size: Int? = nil, workers: Int = 1, label: String = "gate-only") async throws -> JSONValue {
        let topics = try kafka.makeTopics("gate")
        try await kafka.preload(BenchRequest.mix(count: count, bundleID: bundleID, size: size), topic: topics.requests)
        let configuration = try kafka.configuration(topics: topics, apps: plainApp)
        let throughput = try await kafka.runWorkers(workers, configuration: configuration, registry: ExtensionRegistry(), expected: count)
        var fields: [(String, JSONValue)] = [("recordsPerSecond", .number(JSONNumber(throughput.perSecond)))]
        var ratio = ""
        if let baseline, baseline > 0 {
            fields.append(("ratioToBaseline", .number(JSONNumber(throughput.perSecond / baseline))))
            ratio = String(format: ", %.0f%% of baseline", 100 * throughput.perSecond / baseline)
        }
        print(String(format: "%@ %9.0f records/s%@", label.padding(toLength: 12, withPad: " ", startingAt: 0), throughput.perSecond, ratio))
        return .object(JSONObject(fields))
    }

    /// The full worker at a fixed input rate: end-to-end latency percentiles.
    static func latency(_ kafka: BenchKafka, rate: Int, seconds: Int) async throws -> JSONValue {
        let topics = try kafka.makeTopics("latency")
        let configuration = try kafka.configuration(topics: topics, apps: plainApp)
        let requests = BenchRequest.mix(count: rate * seconds, bundleID: bundleID, size: nil).filter { request in
            // Dead letters are not deliveries: keep the valid ones so every request is measured.
            !request.headers.contains { $0.name == "apns-priority" && $0.value == Array("7".utf8) }
        }
        return try await measureLatency(kafka, configuration: configuration, registry: ExtensionRegistry(), requests: requests, rate: rate) { percentiles, _ in
            print("latency      at \(rate)/s: \(percentiles.text)")
        }
    }

    /// Webhook extensions answering after `latency`, with `maxInFlight` 10,000.
    static func extensions(_ kafka: BenchKafka, count: Int, latency: Duration) async throws -> JSONValue {
        try await withWebhook(delay: latency) { url in
            let topics = try kafka.makeTopics("extensions")
            let apps = "  \(bundleID):\n    serviceExtension:\n      kind: webhook\n      url: \(url)\n"
            let configuration = try kafka.configuration(topics: topics, apps: apps, dispatch: "  maxInFlight: 10000\n")
            let requests = (0..<count).map { BenchRequest.mutableAlert($0, bundleID: bundleID) }
            let memoryBefore = peakResidentMegabytes()
            return try await BuiltInExtensions.withRegistry { registry in
                try await measureLatency(kafka, configuration: configuration, registry: registry, requests: requests, rate: nil) { percentiles, throughput in
                    print(String(format: "extensions   %9.0f records/s with %.0f ms webhooks; peak RSS %.0f MB (before: %.0f MB); %@",
                                 throughput.perSecond, latency.milliseconds, peakResidentMegabytes(), memoryBefore, percentiles.text))
                }
            }
        }
    }

    /// Webhooks that never answer, deadline 1 s, grace 200 ms: how late past both the original comes.
    static func deadline(_ kafka: BenchKafka, count: Int) async throws -> JSONValue {
        try await withWebhook(delay: .seconds(3_600)) { url in
            let topics = try kafka.makeTopics("deadline")
            let apps = "  \(bundleID):\n    serviceExtension:\n      kind: webhook\n      url: \(url)\n"
            let configuration = try kafka.configuration(topics: topics, apps: apps, dispatch: "  deadline: 1s\n  expiryGrace: 200ms\n")
            let requests = (0..<count).map { BenchRequest.mutableAlert($0, bundleID: bundleID) }
            return try await BuiltInExtensions.withRegistry { registry in
                try await measureLatency(kafka, configuration: configuration, registry: registry, requests: requests, rate: 200, offset: .milliseconds(1_200)) { percentiles, _ in
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
            fields.append(("bytes\(size)", try await gateOnly(kafka, count: count, baseline: nil, size: size, label: "\(size) B")))
        }
        return .object(JSONObject(fields))
    }

    /// Runs one worker, feeds `requests` (at `rate` per second, or all at once), and measures each
    /// request's latency to its delivery, minus `offset`.
    private static func measureLatency(
        _ kafka: BenchKafka, configuration: Configuration, registry: ExtensionRegistry, requests: [BenchRequest],
        rate: Int?, offset: Duration = .zero, report: (Percentiles, Throughput) -> Void
    ) async throws -> JSONValue {
        let probe = try LatencyProbe(bootstrapServers: kafka.bootstrapServers, deliveries: configuration.topics.deliveries, logger: kafka.logger)
        let dispatcher = try Dispatcher(configuration: configuration, registry: registry)
        let worker = try DispatchWorker(settings: kafka.settings(configuration), dispatcher: dispatcher, logger: kafka.logger)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: kafka.bootstrapServers), logger: kafka.logger)
        let result: JSONValue = try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await worker.run() }
            // Warm up: the group join takes seconds on the embedded broker; measure after it.
            try await waitUntil(limit: .seconds(60)) { worker.statistics.assignedPartitions > 0 }
            let clock = ContinuousClock()
            let start = clock.now
            for (index, request) in requests.enumerated() {
                probe.sent(request.apnsID)
                group.addTask { _ = try await producer.send(request.record(topic: configuration.topics.requests)) }
                if let rate { try await clock.sleep(until: start + .seconds(Double(index + 1) / Double(rate))) }
            }
            try await waitUntil(limit: .seconds(600)) { probe.count >= requests.count }
            let throughput = Throughput(records: requests.count, elapsed: clock.now - start)
            let latencies = probe.sorted.map { $0 - offset }
            let percentiles = Percentiles(latencies)
            report(percentiles, throughput)
            group.cancelAll()
            return .object(JSONObject([
                ("latency", percentiles.json), ("recordsPerSecond", .number(JSONNumber(throughput.perSecond))),
                ("peakResidentMegabytes", .number(JSONNumber(peakResidentMegabytes()))),
            ]))
        }
        await probe.stop()
        await producer.shutdown()
        return result
    }

    /// Polls `condition` every 5 ms (a benchmark's progress check, not a test's synchronisation).
    private static func waitUntil(limit: Duration, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < deadline else { throw BenchError("a benchmark step did not finish within \(limit)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Runs a loopback webhook answering `{"payload": ...}` (the payload plus a key) after `delay`.
    private static func withWebhook<Result: Sendable>(delay: Duration, _ body: (String) async throws -> Result) async throws -> Result {
        let router = Router()
        router.post("hook") { request, _ -> Response in
            try await Task.sleep(for: delay)
            let body = try await request.body.collect(upTo: 1 << 20)
            guard var payload = (try? JSONValue(parsing: Array(buffer: body)))?.objectValue?["payload"]?.objectValue else {
                return Response(status: .badRequest)
            }
            payload["bench"] = true
            let text = #"{"payload":"# + String(decoding: JSONValue.object(payload).serialized(), as: UTF8.self) + "}"
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "bench-webhook")
        logger.logLevel = .critical
        let app = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), backlog: 4_096),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: logger
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else { throw BenchError("the webhook server did not start") }
            defer { group.cancelAll() }
            return try await body("http://127.0.0.1:\(port)/hook")
        }
    }
}
