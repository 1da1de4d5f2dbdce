import Dispatcher
import DispatcherService
import Foundation
import Kafka
import Logging
import Records
import Synchronization
import TestSupport
import Testing

/// One end-to-end set-up: a Kafka broker with the product's topics (librdkafka's mock cluster, or
/// Tansu for the real-broker suite: ``TestBroker``), a configuration file, worker processes of the
/// real binary, a producer of requests and responses, and readers of the outputs.
final class Pipeline: Sendable {
    static let requests = "notifications.requests"
    static let deliveries = "notifications.deliveries"
    static let launches = "notifications.launches"
    static let deadLetter = "notifications.dead-letter"
    static let appStates = "notifications.app-states"
    static let metrics = "notifications.metrics"
    static let responses = "notifications.responses"
    static let actions = "notifications.actions"
    static let feedback = "notifications.feedback"
    static let devices = "notifications.devices"
    /// The topics every request ends in: exactly one record per request across these two.
    static let accountingTopics = [deliveries, deadLetter]
    /// The topics every request and response ends in: one record each across these three.
    static let allAccountingTopics = [deliveries, actions, deadLetter]
    /// The workers' `kafka.properties` unless a test gives its own: short enough for the mock
    /// cluster's rebalances (it waits `session.timeout.ms` − 1 s before each) to stay quick.
    static let defaultKafkaProperties = [
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "500",
        "fetch.wait.max.ms": "10",
    ]

    /// The broker, owned by the pipeline: stopped by ``shutdown()``.
    let broker: TestBroker
    let directory: URL
    let configPath: String
    let group: String
    let partitions: Int32
    let outputs: OutputCollector
    let producer: KafkaProducer
    let logger: Logger
    /// The workers started, with their names, in order.
    private let workers = Mutex<[(name: String, process: ChildProcess)]>([])

    /// `host:port,...` of the broker.
    var bootstrapServers: String { broker.bootstrapServers }

    /// A pipeline on a mock cluster of `brokers` brokers with the product's topics.
    ///
    /// - Parameters:
    ///   - dispatch: the `dispatch` section's YAML lines (indented by two spaces).
    ///   - apps: the `apps` section's YAML lines (indented by two spaces).
    ///   - producerProperties: the test's producer's librdkafka properties.
    convenience init(
        brokers: Int = 1, partitions: Int32 = 12, dispatch: String = "", apps: String, kafkaProperties: [String: String] = Pipeline.defaultKafkaProperties,
        producerProperties: [String: String] = [:]
    ) throws {
        let logger = Self.makeLogger()
        let cluster = try EmbeddedKafkaCluster(brokers: brokers, logger: logger)
        try cluster.createTopics(TopicSettings.product.specifications(partitions: partitions))
        try self.init(
            broker: .embedded(cluster), partitions: partitions, dispatch: dispatch, apps: apps, kafkaProperties: kafkaProperties,
            producerProperties: producerProperties, logger: logger)
    }

    /// A pipeline on `broker`, whose product topics (with `partitions` partitions) exist.
    ///
    /// - Parameters:
    ///   - dispatch: the `dispatch` section's YAML lines (indented by two spaces).
    ///   - apps: the `apps` section's YAML lines (indented by two spaces).
    ///   - kafkaProperties: the workers' `kafka.properties`.
    ///   - producerProperties: the test's producer's librdkafka properties.
    init(
        broker: TestBroker, partitions: Int32, dispatch: String = "", apps: String,
        kafkaProperties: [String: String] = Pipeline.defaultKafkaProperties, producerProperties: [String: String] = [:],
        logger: Logger = Pipeline.makeLogger()
    ) throws {
        self.broker = broker
        self.logger = logger
        self.partitions = partitions
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        group = "workers-\(UUID().uuidString.prefix(8))"
        configPath = directory.appendingPathComponent("dispatcher.yaml").path
        let properties = kafkaProperties.sorted { $0.key < $1.key }.map { "    \($0.key): \"\($0.value)\"" }
        let yaml = """
            kafka:
              bootstrapServers: "\(broker.bootstrapServers)"
              groupId: \(group)
              properties:
            \(properties.joined(separator: "\n"))
            topics:
              appStates: \(Self.appStates)
            metrics:
              interval: 500ms
            http:
              host: 127.0.0.1
              port: 0
            dispatch:
              commitInterval: 100ms
            \(dispatch)
            apps:
            \(apps)
            """
        try yaml.write(toFile: configPath, atomically: true, encoding: .utf8)
        outputs = try OutputCollector(
            bootstrapServers: broker.bootstrapServers,
            topics: [Self.deliveries, Self.launches, Self.deadLetter, Self.actions, Self.feedback],
            logger: logger
        )
        var producerConfiguration = ProducerConfiguration(bootstrapServers: broker.bootstrapServers)
        producerConfiguration.properties = producerProperties
        producer = try KafkaProducer(configuration: producerConfiguration, logger: logger)
    }

    /// The pipeline's logger: warnings and errors only.
    static func makeLogger() -> Logger {
        var logger = Logger(label: "pipeline-test")
        logger.logLevel = .warning
        return logger
    }

    /// Starts a `serve` process named `name` (its `metrics.workerId`, so under exactly-once its
    /// transactional id: a restart under the same name fences the killed one); its standard
    /// error goes to `<name>.log` in the pipeline's directory (a restart appends to it).
    /// - Parameters:
    ///   - environment: variables set for it besides the worker id (`LOG_LEVEL`).
    ///   - launcher: a command that runs it, its arguments before the binary's (`ip netns exec
    ///     NAME`, for a worker in a network namespace of its own); it must replace itself with the
    ///     binary (execvp), so that the process signalled is the worker.
    @discardableResult
    func startWorker(_ name: String, environment: [String: String] = [:], launcher: [String] = []) throws -> ChildProcess {
        let binary = try BuiltBinary.path()
        let arguments = ["serve", "--config", configPath]
        guard let program = launcher.first else {
            return try startWorker(name, executable: binary, arguments: arguments, environment: environment)
        }
        return try startWorker(name, executable: program, arguments: Array(launcher.dropFirst()) + [binary] + arguments, environment: environment)
    }

    /// Starts `executable` with `arguments` as a worker named `name`, as ``startWorker(_:environment:)``
    /// starts `serve`: a program that embeds the worker (Examples/EmbeddedDispatcher), given
    /// ``configPath``.
    @discardableResult
    func startWorker(_ name: String, executable: String, arguments: [String], environment: [String: String] = [:]) throws -> ChildProcess {
        let logPath = directory.appendingPathComponent("\(name).log").path
        if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        try log.seekToEnd()
        let worker = try ChildProcess(
            executable, arguments, standardError: log,
            environment: environment.merging([Configuration.environmentPrefix + "METRICS_WORKER_ID": name]) { _, id in id })
        workers.withLock { $0.append((name, worker)) }
        return worker
    }

    /// The worker started last as `name`.
    func worker(named name: String) -> ChildProcess? {
        workers.withLock { $0.last { $0.name == name }?.process }
    }

    /// Whether worker `name` still runs, and the last warning or error of its log, on one line.
    func workerSummary(_ name: String) -> String {
        let state = worker(named: name).map { $0.hasExited ? "exited" : "running" } ?? "never started"
        let last = log(of: name).split(separator: "\n").last { $0.contains("\"level\":\"warning\"") || $0.contains("\"level\":\"error\"") || $0.contains("\"level\":\"critical\"") }
        return "\(name) \(state), its last warning: \(last.map(FaultGroup.message(of:)) ?? "none")"
    }

    /// What a worker wrote to its log, for failure messages.
    func log(of name: String) -> String {
        (try? String(contentsOfFile: directory.appendingPathComponent("\(name).log").path, encoding: .utf8)) ?? ""
    }

    /// Waits until every request and response has an output, reporting the missing and the
    /// workers' logs if they do not come.
    ///
    /// - Parameter excuse: asked, when some never come, whether evidence excuses them (why, or
    ///   nil); when it does, they are returned rather than failed.
    /// - Returns: the requests without an output that `excuse` excused (none unless asked).
    @discardableResult
    func waitForEveryOutput(
        requests: [TestRequest], responses: [TestResponse] = [], workers: [String], excuse: (([String]) async -> String?)? = nil
    ) async throws -> [String] {
        let ids = Set(requests.map(\.apnsID))
        let traces = Set(responses.map(\.traceparent))
        do {
            try await eventually("every request and response accounted for", limit: .seconds(180)) { [outputs] in
                outputs.count(Pipeline.allAccountingTopics) >= ids.count + traces.count
                    && ids.isSubset(of: outputs.distinctIDs(Pipeline.accountingTopics))
                    && traces.isSubset(of: outputs.records(of: Pipeline.actions).compactMap { $0.header("traceparent") }
                        + outputs.records(of: Pipeline.deadLetter).compactMap { $0.header("traceparent") })
            }
        } catch {
            let accounting = Accounting(outputs, requests: requests, responses: responses)
            // Only requests are ever excused (every response accounted for).
            if let excuse, !accounting.lost.isEmpty, accounting.lost.allSatisfy(ids.contains), let reason = await excuse(accounting.lost) {
                print("pipeline: \(accounting.lost.count) requests without an output, excused: \(reason)")
                return accounting.lost
            }
            let logs = workers.map { "\($0): \(log(of: $0).suffix(1_500))" }.joined(separator: "\n")
            // The first line says the most (a report may show no other): each worker alive or
            // not, and the last warning or error it logged; then where the missing requests lie
            // against the group's committed offsets (committed past them: skipped; below: never
            // finished, or not read).
            Issue.record(
                "\(accounting.lost.count) of \(accounting.sent) unaccounted for (e.g. \(accounting.lost.prefix(2))); \(workers.map(workerSummary).joined(separator: "; ")); \(await whereUnaccounted(Set(accounting.lost))); logs:\n\(logs)"
            )
            throw error
        }
        return []
    }

    /// Where requests with these `apns-id`s lie in the requests topic (partition and offset, the
    /// first few), and the group's committed offsets there, for a failure message.
    func whereUnaccounted(_ ids: Set<String>) async -> String {
        await whereMissing(ids, in: Self.accountingTopics)
    }

    /// ``whereUnaccounted(_:)`` for outputs of `topics` with these `apns-id`s that the test's
    /// reader has not read.
    func whereMissing(_ ids: Set<String>, in topics: [String]) async -> String {
        guard !ids.isEmpty else { return "none unaccounted" }
        let committed = (try? await committedOffsets()).map { "\($0.sorted { $0.key < $1.key })" } ?? "unread"
        guard let messages = try? await readToEnd(Self.requests, on: bootstrapServers, .readUncommitted, limit: .seconds(20)) else {
            return "the requests topic unread; committed \(committed)"
        }
        let places = messages.filter { $0.header("apns-id").map(ids.contains) == true }.map { "\($0.partition)@\($0.offset)" }
        // Read again from the start by a reader of its own: a record there that the test's
        // readers did not deliver is theirs to explain, not the worker's.
        // A read that fails or runs out of time finds nothing: said so, never read as "none written".
        var written: [String] = []
        var truncated: [String] = []
        var missedByCollector: [String] = []
        for topic in topics {
            let outputs: [KafkaMessage]
            do {
                outputs = try await readToEnd(topic, on: bootstrapServers, .readUncommitted, limit: .seconds(60))
            } catch {
                written.append("\(topic) unread (\(error))")
                continue
            }
            written.append("\(outputs.filter { $0.header("apns-id").map(ids.contains) == true }.count) in \(topic) (of \(outputs.count) read)")
            truncated += Self.truncatedPartitions(of: topic, in: outputs)
            missedByCollector += Self.partitionsReadShort(of: topic, collected: self.outputs.records(of: topic), again: outputs)
        }
        // Offsets a consumer jumped over: the tracker commits past them, so a loss there is the
        // consumer's (or the broker's), not a record the worker dropped.
        let skipped = (try? await latestSnapshots()).map { snapshots in
            snapshots.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.totals.offsetsSkipped)" }.joined(separator: ", ")
        } ?? "metrics unread"
        return "unaccounted at \(places.prefix(30)) (\(places.count) found); committed \(committed); offsets the workers' consumers skipped: \(skipped); "
            + "outputs of them in the output topics read again: \(written.joined(separator: ", ")); "
            + "output partitions whose first records the broker deleted: \(truncated.isEmpty ? "none" : truncated.joined(separator: ", ")); "
            + "partitions the test's reader read fewer records of than a reader read again (uncommitted ones too): \(missedByCollector.isEmpty ? "none" : missedByCollector.joined(separator: ", "))"
    }

    /// The partitions of `topic` of which `collected` (the test's reader) holds fewer distinct
    /// offsets than `again` (a reader of its own, later): `topic[partition] collected/again`,
    /// with the first offset the collector lacks. Such a reader skipped records: what it did not
    /// deliver is not the worker's to explain.
    static func partitionsReadShort(of topic: String, collected: [KafkaMessage], again: [KafkaMessage]) -> [String] {
        var had: [Int32: Set<Int64>] = [:]
        for message in collected { had[message.partition, default: []].insert(message.offset) }
        var read: [Int32: [Int64]] = [:]
        for message in again { read[message.partition, default: []].append(message.offset) }
        return read.keys.sorted().compactMap { partition in
            let offsets = read[partition]!
            let have = had[partition] ?? []
            guard let firstMissing = offsets.sorted().first(where: { !have.contains($0) }) else { return nil }
            return "\(topic)[\(partition)] \(have.count)/\(Set(offsets).count), first missing @\(firstMissing)"
        }
    }

    /// Each worker's latest snapshot on the metrics topic, by worker (its `metrics.workerId`:
    /// its name here). A worker publishes one every 500 ms, and a last one at graceful shutdown.
    func latestSnapshots() async throws -> [String: MetricsSnapshot] {
        var latest: [String: MetricsSnapshot] = [:]
        for record in try await readToEnd(Self.metrics, on: bootstrapServers, .readCommitted) {
            guard let value = record.value, let snapshot = try? MetricsSnapshot(jsonBytes: value) else { continue }
            if latest[snapshot.workerId].map({ $0.timestamp <= snapshot.timestamp }) ?? true { latest[snapshot.workerId] = snapshot }
        }
        return latest
    }

    /// The partitions of `topic` whose first record, in `messages` read from the beginning, is
    /// past offset 0 (`topic[partition]@first`): the broker deleted records from their start.
    /// librdkafka's mock cluster keeps at most 5 MB per partition (`rd_kafka_mock_msgset_new`
    /// drops the oldest message sets past it), and a reader still behind the first record kept
    /// is moved on to it (`auto.offset.reset: earliest`), never reading what was deleted.
    static func truncatedPartitions(of topic: String, in messages: [KafkaMessage]) -> [String] {
        var first: [Int32: Int64] = [:]
        for message in messages { first[message.partition] = min(first[message.partition] ?? .max, message.offset) }
        return first.filter { $0.value > 0 }.sorted { $0.key < $1.key }.map { "\(topic)[\($0.key)]@\($0.value)" }
    }

    /// Where produced records landed.
    struct Produced: Sendable {
        /// The end offset of each partition of the topic after these records.
        var ends: [Int32: Int64] = [:]
        /// Each record's partition and offset, by `apns-id` (requests) or `traceparent` (responses).
        var positions: [String: TopicPartitionOffset] = [:]
    }

    /// Produces the requests; records of one device are produced one after another, in order, so
    /// the requests topic holds them in that order; devices run concurrently.
    @discardableResult
    func produce(_ requests: [TestRequest]) async throws -> Produced {
        try await produceByKey(requests.map { ($0.apnsID, $0.record.producerRecord(topic: Self.requests)) })
    }

    /// Produces the responses to the responses topic, as the requests are produced: in order per key.
    @discardableResult
    func produce(_ responses: [TestResponse]) async throws -> Produced {
        try await produceByKey(responses.map { ($0.traceparent, $0.record.producerRecord(topic: Self.responses)) })
    }

    /// Produces records one after another per key, keys concurrently.
    private func produceByKey(_ records: [(id: String, record: ProducerRecord)]) async throws -> Produced {
        var byKey: [[UInt8]: [(id: String, record: ProducerRecord)]] = [:]
        var keyOrder: [[UInt8]] = []
        for entry in records {
            let key = Array(entry.record.key ?? [])
            if byKey[key] == nil { keyOrder.append(key) }
            byKey[key, default: []].append(entry)
        }
        return try await withThrowingTaskGroup(of: [(String, DeliveryReport)].self) { group in
            for key in keyOrder {
                let chain = byKey[key]!
                group.addTask {
                    var reports: [(String, DeliveryReport)] = []
                    for entry in chain {
                        reports.append((entry.id, try await self.producer.send(entry.record)))
                    }
                    return reports
                }
            }
            var produced = Produced()
            for try await reports in group {
                for (id, report) in reports {
                    produced.ends[report.partition] = max(produced.ends[report.partition] ?? 0, report.offset + 1)
                    produced.positions[id] = TopicPartitionOffset(topic: report.topic, partition: report.partition, offset: report.offset)
                }
            }
            return produced
        }
    }

    /// Writes an app state for a device (`nil` deletes it).
    func writeAppState(_ state: String?, for token: String) async throws {
        let value = state.map { Array(#"{"state":"\#($0)"}"#.utf8) }
        _ = try await producer.send(ProducerRecord(topic: Self.appStates, key: Array(token.utf8), value: value))
    }

    /// Writes a devices-table record for a device (SEMANTICS section 11.2): `value` as given (nil deletes the entry).
    func writeDevice(_ value: String?, for token: String) async throws {
        _ = try await producer.send(ProducerRecord(topic: Self.devices, key: Array(token.utf8), value: value.map { Array($0.utf8) }))
    }

    /// The group's committed offsets on `topic` (the requests topic unless given), by partition.
    func committedOffsets(of topic: String = Pipeline.requests) async throws -> [Int32: Int64] {
        var configuration = ConsumerConfiguration(bootstrapServers: bootstrapServers, groupID: group)
        configuration.properties = ["fetch.wait.max.ms": "10"]
        let consumer = try KafkaConsumer(configuration: configuration, logger: logger)
        let partitions = (0..<self.partitions).map { TopicPartition(topic: topic, partition: $0) }
        let offsets = try await consumer.committed(partitions, timeout: .seconds(10))
        await consumer.close()
        return Dictionary(uniqueKeysWithValues: offsets.map { ($0.partition, $0.offset) })
    }

    /// Stops every worker still running (SIGKILL), the readers, the producer and the broker.
    func shutdown() async {
        for worker in workers.withLock({ $0 }) { worker.process.send(signal: SIGKILL) }
        await outputs.close()
        await producer.shutdown()
        await broker.shutdown()
        // KEEP_PIPELINE_LOGS=1 keeps the workers' logs and configuration, to read after a run
        // that failed (docs/testing.md).
        if ProcessInfo.processInfo.environment["KEEP_PIPELINE_LOGS"] == "1" {
            print("pipeline: logs kept in \(directory.path)")
        } else {
            try? FileManager.default.removeItem(at: directory)
        }
    }
}

extension Pipeline {
    /// Runs `body` with a new pipeline and shuts the pipeline down, awaited, however `body` ends.
    static func with<Result>(
        brokers: Int = 1, partitions: Int32 = 12, dispatch: String = "", apps: String,
        kafkaProperties: [String: String] = Pipeline.defaultKafkaProperties, producerProperties: [String: String] = [:],
        _ body: (Pipeline) async throws -> Result
    ) async throws -> Result {
        let pipeline = try Pipeline(
            brokers: brokers, partitions: partitions, dispatch: dispatch, apps: apps, kafkaProperties: kafkaProperties,
            producerProperties: producerProperties)
        return try await withCleanUp(of: pipeline, { await $0.shutdown() }, body)
    }

    /// Runs `body` with a new pipeline on `broker` (`try await .tansu()` for a real broker): creates
    /// the product's topics, and shuts the pipeline and the broker down, awaited, however `body` ends.
    static func with<Result>(
        on broker: TestBroker, partitions: Int32 = 12, dispatch: String = "", apps: String,
        kafkaProperties: [String: String] = Pipeline.defaultKafkaProperties,
        _ body: (Pipeline) async throws -> Result
    ) async throws -> Result {
        let pipeline: Pipeline
        do {
            let logger = makeLogger()
            try await broker.createProductTopics(partitions: partitions, logger: logger)
            pipeline = try Pipeline(
                broker: broker, partitions: partitions, dispatch: dispatch, apps: apps, kafkaProperties: kafkaProperties, logger: logger)
        } catch {
            await broker.shutdown()
            throw error
        }
        return try await withCleanUp(of: pipeline, { await $0.shutdown() }, body)
    }
}
