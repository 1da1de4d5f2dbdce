import Dispatcher
import DispatcherService
import DispatcherTools
import Foundation
import JSON
import Kafka
import Logging
import Notifications
import Records
import Synchronization

/// What the Kafka benchmarks share: the cluster (embedded, or a real one), topics of their own,
/// the input preloaded before any clock starts, and workers run in this process.
struct BenchKafka {
    let bootstrapServers: String
    let cluster: EmbeddedKafkaCluster?
    let partitions: Int32
    let logger: Logger
    /// The workers' `dispatch.guarantee`.
    let guarantee: DeliveryGuarantee

    /// Starts an embedded cluster, or uses `bootstrap` when given (each scenario then creates its
    /// topics there with the admin API).
    init(bootstrap: String?, partitions: Int32, guarantee: DeliveryGuarantee = .atLeastOnce) throws {
        self.guarantee = guarantee
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        self.logger = logger
        self.partitions = partitions
        if let bootstrap {
            bootstrapServers = bootstrap
            cluster = nil
        } else {
            let cluster = try EmbeddedKafkaCluster(brokers: 3, logger: logger)
            self.cluster = cluster
            bootstrapServers = cluster.bootstrapServers
        }
    }

    /// A fresh set of the product's topics, with a unique prefix so scenarios never share data.
    /// - Parameter partitions: partitions of each topic; the bench's `partitions` by default.
    func makeTopics(_ scenario: String, partitions: Int32? = nil) async throws -> TopicSettings {
        let partitions = partitions ?? self.partitions
        let prefix = "bench-\(scenario)-\(UUID().uuidString.prefix(6))"
        var topics = TopicSettings()
        topics.requests = prefix + ".requests"
        topics.deliveries = prefix + ".deliveries"
        topics.launches = prefix + ".launches"
        topics.deadLetter = prefix + ".dead-letter"
        topics.metrics = prefix + ".metrics"
        topics.responses = prefix + ".responses"
        topics.actions = prefix + ".actions"
        topics.feedback = prefix + ".feedback"
        topics.devices = prefix + ".devices"
        topics.channels = prefix + ".channels"
        topics.activities = prefix + ".activities"
        topics.stored = prefix + ".stored"
        topics.activityRepartition = prefix + ".activities-repartition"
        topics.badges = prefix + ".badges"
        if let cluster {
            try cluster.createTopics(topics.specifications(partitions: partitions))
        } else {
            // A real cluster: the worker refuses to start unless its output topics exist, so
            // they are created as deploy/ creates them, not left to auto-creation.
            let admin = try KafkaAdmin(bootstrapServers: bootstrapServers, logger: logger)
            do {
                try await admin.createTopics(topics.specifications(partitions: partitions), timeout: .seconds(30))
            } catch {
                // The usual cause is a cluster that cannot create topics at all, which librdkafka
                // reports only as a timeout waiting for a controller: say which clusters those are.
                throw BenchError(
                    "Could not create the benchmark's topics on \(bootstrapServers): \(error). An admin client needs a cluster "
                        + "controller; librdkafka's mock cluster (what `notification-dispatcher broker` runs) has none: for "
                        + "that one, run the benchmark without --bootstrap, which embeds the broker in this process.")
            }
        }
        return topics
    }

    /// The configuration of a worker reading `topics`.
    func configuration(topics: TopicSettings, apps: String, dispatch: String = "") throws -> Configuration {
        var configuration = try Configuration(yaml: "dispatch:\n\(dispatch)\napps:\n\(apps)", environment: [:])
        configuration.topics = topics
        configuration.kafka.bootstrapServers = bootstrapServers
        configuration.kafka.groupId = "bench-\(UUID().uuidString.prefix(8))"
        configuration.dispatch.guarantee = guarantee
        return configuration
    }

    /// Settings for a worker of `configuration`, tuned like the tests for the embedded broker.
    func settings(_ configuration: Configuration) -> WorkerSettings {
        var settings = WorkerSettings(configuration: configuration)
        settings.consumer.sessionTimeout = .seconds(6)
        settings.consumer.heartbeatInterval = .milliseconds(500)
        // A fetch returns after at most 1 ms without data (librdkafka's default is 500 ms): the
        // latency scenario measures the worker, not the broker's wait for data.
        settings.consumer.properties["fetch.wait.max.ms"] = "1"
        // Several workers run in this process: each needs a transactional id of its own.
        if guarantee == .exactlyOnce { settings.producer.transactionalID = "bench-\(UUID().uuidString.prefix(8))" }
        return settings
    }

    /// The most bytes a scenario stores per partition of the embedded broker: it keeps about 5 MiB
    /// per partition and silently drops older data, which would leave a scenario waiting for
    /// records that are gone.
    static let embeddedBytesPerPartition = 4 << 20

    /// What the broker stores per record besides key and value (headers, batch framing), roughly.
    static let overheadBytesPerRecord = 64

    /// Checked before any broker starts: the embedded broker silently drops a partition's oldest
    /// records past about 5 MiB, and a contender would wait for records that are gone.
    /// - Throws: ``BenchError`` when `requests` spread over `partitions` do not fit.
    static func checkFitsEmbeddedBroker(_ requests: [BenchRequest], partitions: Int32) throws(BenchError) {
        let stored = requests.reduce(0) { total, request in
            total + request.key.count + request.value.count + overheadBytesPerRecord
                + request.headers.reduce(0) { $0 + $1.name.utf8.count + ($1.value?.count ?? 0) }
        }
        let perPartition = stored / Int(partitions)
        guard perPartition <= embeddedBytesPerPartition else {
            throw BenchError(
                "\(requests.count) requests need \(perPartition >> 20) MiB per partition; the embedded broker keeps about 5 MiB: use fewer --records or more --partitions")
        }
    }

    /// How many records with `size`-byte values (and 64-byte device-token keys) fit the embedded
    /// broker; `count` with a real cluster.
    func fitting(_ count: Int, size: Int) -> Int {
        let perRecord = size + 64 + Self.overheadBytesPerRecord
        return cluster == nil ? count : min(count, Int(partitions) * Self.embeddedBytesPerPartition / perRecord)
    }

    /// Produces `requests` to `topic` in batches; the clock of a throughput scenario starts after.
    func preload(_ requests: [BenchRequest], topic: String) async throws {
        if cluster != nil {
            let bytes = requests.reduce(0) { $0 + $1.value.count + $1.key.count + Self.overheadBytesPerRecord }
            let perPartition = bytes / Int(partitions)
            guard perPartition <= Self.embeddedBytesPerPartition else {
                throw BenchError(
                    "\(requests.count) records need \(perPartition >> 20) MiB per partition; the embedded broker keeps about 5 MiB: use fewer --records or more --partitions")
            }
        }
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: bootstrapServers), logger: logger)
        for start in stride(from: 0, to: requests.count, by: 5_000) {
            let batch = requests[start..<min(start + 5_000, requests.count)].map { $0.record(topic: topic) }
            let failures = await producer.send(batch).filter { if case .failure = $0 { true } else { false } }
            guard failures.isEmpty else { throw BenchError("preloading failed: \(failures.count) records not written") }
        }
        await producer.shutdown()
    }

    /// Runs `workers` workers until they have accounted for `expected` records; returns the rate
    /// measured from the first record accounted for to the last (group joins excluded).
    func runWorkers(
        _ workers: Int, configuration: Configuration, registry: ExtensionRegistry, expected: Int,
        limit: Duration = .seconds(600)
    ) async throws -> Throughput {
        let dispatcher = try Dispatcher(configuration: configuration, registry: registry)
        let running = try (0..<workers).map { _ in
            try DispatchWorker(settings: settings(configuration), dispatcher: dispatcher, logger: logger)
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in running { group.addTask { try await worker.run() } }
            let clock = ContinuousClock()
            let deadline = clock.now + limit
            // The clock starts at the last look that found nothing accounted for yet, so the
            // workers' start-up (group join, restore) is left out and a small run that is
            // accounted for between two looks still measures every record, never zero.
            var start = Throughput.Start()
            var peakInFlight = 0
            while clock.now < deadline {
                let statistics = running.map(\.statistics)
                let done = statistics.reduce(0) { $0 + $1.accountedFor }
                peakInFlight = max(peakInFlight, statistics.reduce(0) { $0 + $1.inFlight })
                if done == 0 { start = Throughput.Start() }
                if done >= expected {
                    group.cancelAll()
                    return start.finish(records: done, peakInFlight: peakInFlight)
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            group.cancelAll()
            throw BenchError("workers accounted for fewer than \(expected) records within \(limit)")
        }
    }
}

/// A rate measured between two instants, with the process's CPU time over the same interval.
struct Throughput: Sendable {
    var records: Int
    var elapsed: Duration
    var peakInFlight = 0
    /// Process CPU seconds used over `elapsed`.
    var cpuSeconds = 0.0

    /// Starts measuring now: call ``finish(records:)`` at the end.
    struct Start {
        let instant = ContinuousClock.now
        let cpu = BenchLoop.processCPUTime()

        func finish(records: Int, peakInFlight: Int = 0) -> Throughput {
            Throughput(records: records, elapsed: .now - instant, peakInFlight: peakInFlight, cpuSeconds: BenchLoop.processCPUTime() - cpu)
        }
    }

    /// How many cores were busy on average (process CPU time over wall time).
    var coresBusy: Double {
        let seconds = elapsed.milliseconds / 1_000
        return seconds > 0 ? cpuSeconds / seconds : 0
    }

    var perSecond: Double {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds > 0 ? Double(records) / seconds : 0
    }
}

/// A benchmark that could not complete.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// One generated request record of a benchmark.
struct BenchRequest: Sendable {
    var key: [UInt8]
    var headers: [RecordHeader]
    var value: [UInt8]
    var apnsID: String

    func record(topic: String) -> ProducerRecord {
        ProducerRecord(topic: topic, key: key, value: value, headers: headers)
    }

    /// A mutable alert for device number `index` (one device per request, so per-device ordering
    /// never serialises a scenario meant to measure concurrency).
    static func mutableAlert(_ index: Int, bundleID: String) -> BenchRequest {
        let apnsID = UUID().uuidString.lowercased()
        return BenchRequest(
            key: deviceToken(index),
            headers: [RecordHeader(name: "apns-topic", value: bundleID), RecordHeader(name: "apns-id", value: apnsID)],
            value: Array(#"{"aps":{"alert":{"title":"T\#(index)","body":"B"},"mutable-content":1}}"#.utf8),
            apnsID: apnsID
        )
    }

    /// The gate-only mix: alerts (half of them mutable, with no extension configured), silent
    /// pushes, badge updates and invalid records (about 5%), padded to `size` bytes each, or to
    /// sizes spread over 200...4096 when `size` is nil. Each request goes to a device of its own,
    /// as in a real stream, where a device rarely gets two notifications within a second.
    static func mix(count: Int, bundleID: String, size: Int?, seed: UInt64 = 11) -> [BenchRequest] {
        var generator = SeededRandom(seed: seed)
        let topic = RecordHeader(name: "apns-topic", value: bundleID)
        return (0..<count).map { index in
            let apnsID = UUID().uuidString.lowercased()
            var headers = [topic, RecordHeader(name: "apns-id", value: apnsID)]
            let aps: String
            switch index % 20 {
            case 0..<6: aps = #"{"alert":{"title":"Order \#(index)","body":"Shipped"},"mutable-content":1}"#
            case 6..<11: aps = #"{"alert":"Reminder \#(index)","sound":"default"}"#
            case 11..<15:
                headers += [RecordHeader(name: "apns-push-type", value: "background"), RecordHeader(name: "apns-priority", value: "5")]
                aps = #"{"content-available":1}"#
            case 15..<19: aps = #"{"badge":\#(index % 50)}"#
            default:
                headers.append(RecordHeader(name: "apns-priority", value: "7"))
                aps = #"{"alert":"invalid priority"}"#
            }
            let target = size ?? Int.random(in: 200...4096, using: &generator)
            var value = Array(#"{"aps":\#(aps),"pad":""#.utf8)
            value += repeatElement(UInt8(ascii: "x"), count: max(0, target - value.count - 2))
            value += Array(#""}"#.utf8)
            return BenchRequest(key: deviceToken(index), headers: headers, value: value, apnsID: apnsID)
        }
    }

    /// A 64-hex-digit device token, distinct for every `index`.
    static func deviceToken(_ index: Int) -> [UInt8] {
        var token = [UInt8](repeating: UInt8(ascii: "0"), count: 64)
        var rest = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15
        for position in stride(from: 63, to: 47, by: -1) {
            token[position] = Hex.digit(UInt8(rest & 0xF))
            rest >>= 4
        }
        return token
    }
}

/// Percentiles of a sorted list of durations, in milliseconds.
struct Percentiles: Sendable {
    var p50: Double, p90: Double, p99: Double, p999: Double, max: Double

    init(_ sorted: [Duration]) {
        func at(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = Swift.min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)
            return sorted[Swift.max(0, index)].milliseconds
        }
        p50 = at(0.5)
        p90 = at(0.9)
        p99 = at(0.99)
        p999 = at(0.999)
        max = sorted.last?.milliseconds ?? 0
    }

    var json: JSONValue {
        .object(JSONObject([("p50Ms", .number(JSONNumber(p50))), ("p90Ms", .number(JSONNumber(p90))),
                            ("p99Ms", .number(JSONNumber(p99))), ("p999Ms", .number(JSONNumber(p999))),
                            ("maxMs", .number(JSONNumber(max)))]))
    }

    var text: String {
        String(format: "p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, p99.9 %.1f ms, max %.1f ms", p50, p90, p99, p999, max)
    }
}

extension Duration {
    /// The duration in milliseconds.
    var milliseconds: Double {
        Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15
    }
}

/// Starts the peak resident memory afresh from the current figure (Linux `clear_refs` 5), so a
/// scenario's peak is its own; returns whether the kernel took it.
@discardableResult
func resetPeakResident() -> Bool {
    (try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))) != nil
}

/// A process's peak resident memory so far (VmHWM), in megabytes: this process's, or `pid`'s.
func peakResidentMegabytes(of pid: Int32? = nil) -> Double {
    guard let status = try? String(contentsOfFile: "/proc/\(pid.map(String.init) ?? "self")/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return 0 }
    let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
    return kilobytes / 1_024
}
