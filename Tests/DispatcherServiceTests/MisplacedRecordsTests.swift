import Dispatcher
import Foundation
import Kafka
import Logging
import Records
import Testing
import TestSupport

@testable import DispatcherService

/// Records placed by another partitioner than the worker's are found, not silently ignored
/// (docs/worker.md, "Partitioned state"): state records misplaced in their changelog are counted and
/// logged at restore, and the partitioner the requests topic is keyed by is learnt from a sample.
/// Every record is written by a librdkafka producer with the partitioner under test, to the
/// embedded mock cluster.
@Suite("misplaced records", .serialized)
struct MisplacedRecordsTests {
    static let prefix = "t"
    static let partitions: Int32 = 4
    static let bundleID = "com.example.app"
    static let apps = """
          \(bundleID):
            defaultAppState: notRunning
        """

    /// A device or activity token: 64 hexadecimal characters made from `seed`.
    static func token(_ seed: Int) -> String { String(format: "%064x", seed &* 2_654_435_761) }

    static func keys(_ algorithm: KeyPartitioner.Algorithm) -> KeyPartitioner {
        KeyPartitioner(algorithm, partitionCount: partitions)
    }

    /// A producer that places keys with `partitioner`.
    static func producer(_ cluster: EmbeddedKafkaCluster, partitioner: String) throws -> KafkaProducer {
        var configuration = ProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
        configuration.partitioner = partitioner
        return try KafkaProducer(configuration: configuration, logger: CapturedLogs.silent)
    }

    /// Writes `records` with `producer`, then shuts it down (awaited) whether they were written or not.
    static func write(with producer: KafkaProducer, _ records: [ProducerRecord]) async throws {
        try await withCleanUp(of: producer, { await $0.shutdown() }) { producer in
            for record in records { _ = try await producer.send(record) }
        }
    }

    /// The configuration of a worker on `cluster`, with `properties` added to `kafka.properties`.
    static func configuration(_ cluster: EmbeddedKafkaCluster, properties: String = "") throws -> Configuration {
        try Configuration(
            yaml: """
                kafka:
                  bootstrapServers: "\(cluster.bootstrapServers)"
                  groupId: misplaced-\(UUID().uuidString.prefix(8))
                  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", fetch.wait.max.ms: "10"\(properties)}
                dispatch: {commitInterval: 100ms}
                apps:
                \(apps)
                """)
    }

    /// Runs a worker of `configuration` in this process with its own metrics and `logs` while
    /// `body` runs; shuts it down gracefully (awaited) when `body` ends.
    static func withWorker<Result: Sendable>(
        _ configuration: Configuration, logs: CapturedLogs,
        _ body: @Sendable (DispatchWorker, WorkerMetrics, PrometheusExport) async throws -> Result
    ) async throws -> Result {
        let export = PrometheusExport()
        let metrics = WorkerMetrics(names: MetricNames(prefix: prefix), factory: export.factory)
        let dispatcher = try Dispatcher(configuration: configuration, registry: ExtensionRegistry())
        let worker = try DispatchWorker(
            settings: WorkerSettings(configuration: configuration), dispatcher: dispatcher, logger: logs.logger(level: .info), metrics: metrics)
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                try await worker.run()
                return nil
            }
            // Stopped as a service group stops it (SIGTERM): gracefully, its drain, commit and
            // close ending its run, which the group awaits. Cancelled instead, as it was, its run
            // twice never ended (docs/testing.md, "A cancelled worker, and a hang seen twice").
            defer { worker.beginShutdown() }
            return try await body(worker, metrics, export)
        }
    }

    /// Whether the worker logged a restore's end: its misplaced records are counted by then.
    static func isRestored(_ logs: CapturedLogs) -> Bool {
        logs.entries.contains { $0.message == "state restored" }
    }

    /// The warnings logged about misplaced records, as `topic[partition]`, in order.
    static func misplacedWarnings(_ logs: CapturedLogs) -> [String] {
        logs.entries.filter { $0.level == "warning" && $0.message.contains("puts in other partitions") }.map {
            "\($0.metadata["kafka.topic"] ?? "?")[\($0.metadata["kafka.partition"] ?? "?")]"
        }
    }

    /// State records of every table, some written with `consistent_random` (most of them
    /// misplaced under murmur2), some with `murmur2_random` (all in place), and what a restore
    /// under murmur2 must find.
    struct StateRecords: Sendable {
        var records: [(record: ProducerRecord, partitioner: String)] = []
        /// Misplaced records by table.
        var misplaced: [String: Int] = ["activities": 0, "stored": 0, "devices": 0]
        /// Where misplaced records are: `topic[partition]`.
        var places: Set<String> = []
        /// Entries each table holds once restored (every record is valid and has its own key).
        var entries: [String: Int] = ["activities": 0, "stored": 0, "devices": 0]

        init() {
            let murmur = MisplacedRecordsTests.keys(.murmur2Random)
            let crc = MisplacedRecordsTests.keys(.consistentRandom)
            func add(_ table: String, topic: String, key: String, placedBy token: String, value: String, partitioner: String, explicit: Bool) {
                let written = partitioner == "consistent_random" ? crc : murmur
                let partition = written.partition(of: Array(token.utf8))
                records.append(
                    (ProducerRecord(topic: topic, partition: explicit ? partition : nil, key: Array(key.utf8), value: Array(value.utf8)), partitioner))
                entries[table, default: 0] += 1
                if murmur.partition(of: Array(token.utf8)) != partition,
                    // A stored record's token is lower case; its request may have been keyed in upper case.
                    table != "stored" || murmur.partition(of: Array(token.uppercased().utf8)) != partition
                {
                    misplaced[table, default: 0] += 1
                    places.insert("\(topic)[\(partition)]")
                }
            }
            for index in 0..<24 {
                let partitioner = index < 16 ? "consistent_random" : "murmur2_random"
                let activity = MisplacedRecordsTests.token(1_000 + index)
                add(
                    "activities", topic: "notifications.activities", key: activity, placedBy: activity,
                    value: #"{"bundleId":"\#(MisplacedRecordsTests.bundleID)","status":"active","timestamp":1700000000}"#,
                    partitioner: partitioner, explicit: false)
                let device = MisplacedRecordsTests.token(2_000 + index)
                add("devices", topic: "notifications.devices", key: device, placedBy: device, value: #"{"online":false}"#, partitioner: partitioner, explicit: false)
                // The worker writes a stored record to the partition of the request that stored it,
                // keyed by its device: where the request's producer put the token. The last four
                // were keyed in upper case, as some providers write tokens.
                let stored = MisplacedRecordsTests.token(3_000 + index)
                let requestKey = index >= 20 ? stored.uppercased() : stored
                add(
                    "stored", topic: "notifications.stored", key: "\(stored)/\(MisplacedRecordsTests.bundleID)", placedBy: requestKey,
                    value: MisplacedRecordsTests.storedValue(token: stored, seed: index),
                    partitioner: partitioner, explicit: true)
            }
        }

        /// Writes the records, each with a producer of its partitioner.
        func write(to cluster: EmbeddedKafkaCluster) async throws {
            for partitioner in ["consistent_random", "murmur2_random"] {
                try await MisplacedRecordsTests.write(
                    with: MisplacedRecordsTests.producer(cluster, partitioner: partitioner),
                    records.filter { $0.partitioner == partitioner }.map(\.record))
            }
        }
    }

    /// A stored notification's value (section 16.2) for `token`.
    static func storedValue(token: String, seed: Int) -> String {
        let id = String(format: "00000000-0000-4000-8000-%012x", seed)
        return #"{"apnsId":"\#(id)","deviceToken":"\#(token)","bundleId":"\#(bundleID)","topic":"\#(bundleID)","pushType":"alert","priority":10,"collapseId":null,"expiration":null,"expiresAt":4102444800000,"receivedAt":"2025-01-01T00:00:00.000Z","headers":{},"payload":{"aps":{"alert":"hello"}}}"#
    }

    @Test("a restore counts exactly the records written with consistent_random to a partition murmur2 does not give their key, by table, logs each partition and table holding some once, naming consistent_random, and still applies them")
    func misplacedStateRecords() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: CapturedLogs.silent)
        defer { cluster.shutdown() }
        try cluster.createTopics(TopicSettings.product.specifications(partitions: Self.partitions))
        let state = StateRecords()
        #expect(state.misplaced.values.allSatisfy { $0 > 0 } && state.misplaced.values.allSatisfy { $0 < 24 }, "some of each table misplaced, not all: \(state.misplaced)")
        try await state.write(to: cluster)

        let logs = CapturedLogs()
        try await Self.withWorker(try Self.configuration(cluster), logs: logs) { worker, metrics, export in
            try await eventually("the state restored") { Self.isRestored(logs) }
            let gauges = try #require(worker.statistics.state)
            #expect(
                [gauges.activities.entries, gauges.stored.entries, gauges.devices] == [state.entries["activities"], state.entries["stored"], state.entries["devices"]],
                "every record applied, the misplaced ones too: \(logs.entries.filter { $0.level == "warning" })")
            metrics.update(from: worker.statistics)
            let text = PrometheusText(export.render())
            for table in ["activities", "stored", "devices"] {
                #expect(
                    text[#"t_state_misplaced_records_total{table="\#(table)"}"#] == Double(state.misplaced[table] ?? -1),
                    "\(table): \(text.series("t_state_misplaced_records_total"))")
            }
        }
        let warnings = Self.misplacedWarnings(logs)
        #expect(warnings.sorted() == state.places.sorted(), "one warning per partition and table holding misplaced records")
        let lines = logs.entries.filter { $0.message.contains("puts in other partitions") }
        #expect(lines.allSatisfy { $0.message.contains("written with consistent_random, librdkafka's default") }, "\(lines)")
        #expect(lines.allSatisfy { $0.message.contains("set kafka.properties.partitioner") })
        let ignored = logs.entries.filter { $0.message.contains("record ignored") }
        #expect(ignored.isEmpty, "every record is valid: \(ignored.prefix(1))")
    }

    @Test("records in their key's partition are not counted: a worker whose partitioner is consistent_random finds only those written with murmur2_random misplaced, named as the Java client's")
    func configuredPartitionerDecides() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: CapturedLogs.silent)
        defer { cluster.shutdown() }
        try cluster.createTopics(TopicSettings.product.specifications(partitions: Self.partitions))
        let crc = Self.keys(.consistentRandom)
        let devices = (0..<16).map { Self.token(4_000 + $0) }
        let inPlace = devices.prefix(8)
        let elsewhere = devices.suffix(8).filter { crc.partition(of: Array($0.utf8)) != Self.keys(.murmur2Random).partition(of: Array($0.utf8)) }
        try #require(!elsewhere.isEmpty)
        try await Self.write(
            with: Self.producer(cluster, partitioner: "consistent_random"),
            inPlace.map { ProducerRecord(topic: "notifications.devices", key: Array($0.utf8), value: Array(#"{"online":true}"#.utf8)) })
        try await Self.write(
            with: Self.producer(cluster, partitioner: "murmur2_random"),
            elsewhere.map { ProducerRecord(topic: "notifications.devices", key: Array($0.utf8), value: Array(#"{"online":true}"#.utf8)) })

        let logs = CapturedLogs()
        let configuration = try Self.configuration(cluster, properties: #", partitioner: "consistent_random""#)
        try await Self.withWorker(configuration, logs: logs) { worker, metrics, export in
            try await eventually("the state restored") { Self.isRestored(logs) }
            #expect(worker.statistics.state?.devices == inPlace.count + elsewhere.count)
            metrics.update(from: worker.statistics)
            let text = PrometheusText(export.render())
            #expect(text[#"t_state_misplaced_records_total{table="devices"}"#] == Double(elsewhere.count))
            #expect(text.series("t_state_misplaced_records_total").count == 1, "no other table has any: \(text.series("t_state_misplaced_records_total"))")
        }
        let lines = logs.entries.filter { $0.message.contains("puts in other partitions") }
        #expect(!lines.isEmpty && lines.allSatisfy { $0.message.contains("written with murmur2_random, the Java client's default") }, "\(lines)")
    }

    @Test("every restore counts the misplaced records it reads, but each partition and table is logged once in the worker's life")
    func loggedOncePerPartitionAndTable() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: CapturedLogs.silent)
        defer { cluster.shutdown() }
        try cluster.createTopics(TopicSettings.product.specifications(partitions: Self.partitions))
        let records = StateRecords()
        try await records.write(to: cluster)
        let logs = CapturedLogs()
        let topics = WorkerSettings.StateSettings(
            devices: "notifications.devices", channels: "notifications.channels", activities: "notifications.activities",
            stored: "notifications.stored", activityRepartition: "notifications.activity-repartition")
        let state = PartitionedState(
            topics: topics, requestsTopic: "notifications.requests",
            consumer: ConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupID: "unused"), logger: logs.logger())
        let counts = Dictionary(uniqueKeysWithValues: (["notifications.requests"] + topics.coPartitioned).map { ($0, Self.partitions) })
        try state.check(partitionCounts: counts, partitioner: "murmur2_random")
        let assigned = (0..<Self.partitions).flatMap {
            [TopicPartition(topic: "notifications.requests", partition: $0), TopicPartition(topic: "notifications.devices", partition: $0)]
        }
        // It blocks its thread, as on the consumer's poll thread: not on the test's.
        for _ in 0..<2 {
            let restored = await Task.detached { state.restore(assigned: assigned, committed: [:], timeout: .seconds(60)) }.value
            #expect(restored)
        }
        let twice = records.misplaced.mapValues { $0 * 2 }
        #expect(state.gauges.misplacedRecords == twice)
        #expect(Self.misplacedWarnings(logs).sorted() == records.places.sorted(), "the second restore logged nothing more")
    }

    /// How the requests of a run are keyed: each with a producer of one partitioner, or half and half.
    enum Keying: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case consistentRandom = "consistent_random", murmur2Random = "murmur2_random", fnv1aRandom = "fnv1a_random", mixed
        var testDescription: String { rawValue }
    }

    @Test(
        "the worker learns which partitioner the requests topic is keyed by from a sample, and warns once when it is not its own",
        arguments: [
            (Keying.consistentRandom, "murmur2_random"), (.murmur2Random, "murmur2_random"), (.fnv1aRandom, "murmur2_random"),
            (.mixed, "murmur2_random"), (.consistentRandom, "consistent_random"),
        ])
    func requestsPartitioner(written: Keying, configured: String) async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: CapturedLogs.silent)
        defer { cluster.shutdown() }
        try cluster.createTopics(TopicSettings.product.specifications(partitions: Self.partitions))
        let requests = (0..<2 * PartitionerSample.size).map { index in
            TestRequest.make(.plainAlert, bundleID: Self.bundleID, token: Self.token(5_000 + index), sequence: index).record.producerRecord(topic: "notifications.requests")
        }
        switch written {
        case .mixed:
            // Written in turn, so that each partition holds both kinds from its start, whichever
            // records the sample takes.
            let murmur = try Self.producer(cluster, partitioner: "murmur2_random")
            try await withCleanUp(of: murmur, { await $0.shutdown() }) { murmur in
                try await withCleanUp(of: try Self.producer(cluster, partitioner: "consistent_random"), { await $0.shutdown() }) { crc in
                    for (index, request) in requests.enumerated() { _ = try await (index.isMultiple(of: 2) ? murmur : crc).send(request) }
                }
            }
        default:
            try await Self.write(with: Self.producer(cluster, partitioner: written.rawValue), requests)
        }
        let found = written == .mixed ? "none" : written.rawValue
        let differs = found != configured

        let logs = CapturedLogs()
        let configuration = try Self.configuration(cluster, properties: #", partitioner: "\#(configured)""#)
        try await Self.withWorker(configuration, logs: logs) { worker, metrics, export in
            try await eventually("the sample settled") { worker.statistics.state?.requestsPartitioner != nil }
            #expect(worker.statistics.state?.requestsPartitioner == .init(found: found, configured: configured))
            try await eventually("every request decided") { worker.statistics.accountedFor == requests.count }
            metrics.update(from: worker.statistics)
            let text = PrometheusText(export.render())
            #expect(
                text.series("t_state_partitioner_mismatch") == [#"t_state_partitioner_mismatch{found="\#(found)",configured="\#(configured)"}"#: differs ? 1 : 0])
        }
        let warnings = logs.entries.filter { $0.level == "warning" && $0.message.hasPrefix("notifications.requests is keyed") }
        #expect(warnings.count == (differs ? 1 : 0), "\(warnings)")
        if written == .mixed {
            #expect(warnings.first?.message.contains("keyed by no one partitioner the worker knows") == true)
        } else if differs {
            #expect(warnings.first?.message.contains("set kafka.properties.partitioner to \(found)") == true, "\(warnings)")
        }
        #expect(Self.misplacedWarnings(logs).isEmpty, "no state record was written")
    }
}

/// The sample of the requests topic's keys, as a pure value.
@Suite struct PartitionerSampleTests {
    @Test("a sample settles after its size in keys, leaves empty keys out, and finds the placement that puts every key where it was read")
    func settles() {
        let crc = MisplacedRecordsTests.keys(.consistentRandom)
        var sample = PartitionerSample(keys: MisplacedRecordsTests.keys(.murmur2Random))
        for index in 0..<PartitionerSample.size {
            #expect(sample.finding == nil && !sample.isSettled)
            [UInt8]().withUnsafeBytes { sample.add(key: $0, partition: 0) }
            let key = Array(MisplacedRecordsTests.token(index).utf8)
            key.withUnsafeBytes { sample.add(key: $0, partition: crc.partition(of: key)) }
        }
        #expect(sample.sampled == PartitionerSample.size, "empty keys left out")
        #expect(sample.finding == .follows(.consistentRandom))
        let key = Array(MisplacedRecordsTests.token(99).utf8)
        key.withUnsafeBytes { sample.add(key: $0, partition: 0) }
        #expect(sample.sampled == PartitionerSample.size, "a whole sample takes no more keys")
    }

    @Test("on a topic of one partition every placement puts every key there: the worker's own is the finding")
    func onePartition() {
        var sample = PartitionerSample(keys: KeyPartitioner(.fnv1a, partitionCount: 1))
        for index in 0..<PartitionerSample.size {
            Array(MisplacedRecordsTests.token(index).utf8).withUnsafeBytes { sample.add(key: $0, partition: 0) }
        }
        #expect(sample.finding == .follows(.fnv1aRandom))
    }
}
