import Dispatcher
import DispatcherService
import Foundation
import Kafka
import Logging
import Records
import TestSupport
import Testing

/// `dispatch.guarantee: exactly-once` and an output the broker refuses for good,
/// through the real binary on Tansu: the refused request becomes its `OutputRejected` dead
/// letter, in a transaction with its offset, and the worker goes on: no restart, its partitions
/// committed to their ends, every other request's outputs once.
///
/// The refusal is a real one from the broker, in its ProduceResponse: Tansu 0.6.0 does not apply
/// a topic's `max.message.bytes` (its broker never reads the setting), but it validates records
/// against a JSON schema of their topic and refuses a batch with a record that does not match
/// (`INVALID_RECORD`, a permanent error, as Kafka's `MESSAGE_TOO_LARGE` is). The deliveries
/// topic's schema here refuses the deliveries of two requests, by `apnsId`.
///
/// Tansu shows an aborted transaction's records to `read_committed` readers (``ExactlyOnceTests``
/// says why): the outputs the worker wrote in a transaction it then aborted are still read here.
/// The first refused request is therefore sent alone, after the requests before it were
/// committed, so that its aborted transaction holds nothing (its one output was refused): every
/// other request must then have exactly one outcome. The second is sent among others, so its
/// aborted transaction holds their outputs: those must be exactly the records written again
/// later, each once more, in one run of offsets per partition (one transaction), and nothing else
/// may be written twice.
@Suite("Exactly-once: an output refused for good (Tansu)", .serialized, .enabled(if: TansuBroker.isInstalled, "needs Tansu: scripts/install-tansu"))
struct ExactlyOnceRefusalTests {
    static let partitions: Int32 = 6
    static let refusedAlone = "0ddba11d-0000-4000-8000-00000000000a"
    static let refusedAmongOthers = "0ddba11d-0000-4000-8000-00000000000b"

    @Test("a delivery the broker refuses for good becomes its request's one dead letter; the partition moves on and the worker never restarts")
    func refusedDelivery() async throws {
        let schemas = FileManager.default.temporaryDirectory.appendingPathComponent("eos-schemas-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: schemas, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: schemas) }
        let schema = #"{"type": "object", "properties": {"value": {"not": {"required": ["apnsId"], "properties": {"apnsId": {"enum": ["\#(Self.refusedAlone)", "\#(Self.refusedAmongOthers)"]}}}}}}"#
        try schema.write(to: schemas.appendingPathComponent("\(ExactlyOnceTests.deliveries).json"), atomically: true, encoding: .utf8)

        try await TansuBroker.with(schemaRegistry: schemas.path) { broker in
            let admin = try KafkaAdmin(bootstrapServers: broker.bootstrapServers, logger: ExactlyOnceTests.logger)
            try await admin.createTopics(TopicSettings.product.specifications(partitions: Self.partitions), timeout: .seconds(20))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eos-refusal-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let harness = try ExactlyOnceTests.Harness(directory: directory, bootstrapServers: broker.bootstrapServers, guarantee: .exactlyOnce)
            try await withCleanUp(of: harness, { await $0.close() }) { harness in
                try await Self.refusedDelivery(harness, broker: broker)
            }
        }
    }

    /// The scenario of ``refusedDelivery()``.
    static func refusedDelivery(_ harness: ExactlyOnceTests.Harness, broker: TansuBroker) async throws {
        let outcomes = [ExactlyOnceTests.deliveries, ExactlyOnceTests.deadLetter]
        let kinds: [TestRequest.Kind] = [.plainAlert, .silent, .badge, .badPriority]
        let keys = try #require(KeyPartitioner(name: "murmur2_random", partitionCount: partitions))
        let tokens = (0..<60).map { String(repeating: String(format: "%08x", $0), count: 8) }
        // The second refused request's partition gets no other request while it is in flight: a
        // broker refuses a batch whole, and the others of its batch would be refused with it.
        let refusedToken = tokens[0]
        let refusedPartition = keys.partition(of: Array(refusedToken.utf8))
        let otherTokens = tokens.dropFirst().filter { keys.partition(of: Array($0.utf8)) != refusedPartition }
        func requests(_ count: Int, from offset: Int, tokens: [String]) -> [TestRequest] {
            (0..<count).map { index in
                TestRequest.make(kinds[index % kinds.count], bundleID: ExactlyOnceTests.bundleID, token: tokens[index % tokens.count], sequence: offset + index)
            }
        }
        func refused(_ id: String, sequence: Int) -> TestRequest {
            var request = TestRequest.make(.plainAlert, bundleID: ExactlyOnceTests.bundleID, token: refusedToken, sequence: sequence)
            request.apnsID = id
            request.record.headers = request.record.headers.map { $0.name == "apns-id" ? RecordHeader(name: "apns-id", value: id) : $0 }
            return request
        }

        let worker = try harness.workers.start("w1")
        var ends: [Int32: Int64] = [:]
        var places: [String: TopicPartitionOffset] = [:]
        // Before: committed.
        let before = requests(300, from: 0, tokens: tokens)
        try await produce(before, with: harness.producer, ends: &ends, places: &places)
        try await harness.collector.waitForAll(Set(before.map(\.apnsID)), in: outcomes, limit: .seconds(120))
        // The first refused request, alone: its transaction holds nothing but the refused delivery.
        let alone = refused(refusedAlone, sequence: 1_000)
        try await produce([alone], with: harness.producer, ends: &ends, places: &places)
        do {
            try await harness.collector.waitForAll([refusedAlone], in: [ExactlyOnceTests.deadLetter], limit: .seconds(60))
        } catch {
            print("the refused request's dead letter did not come; the worker's log:\n\(harness.workers.log(of: "w1").suffix(8_000))")
            throw error
        }
        // The second, among others that keep coming (50 every 10 ms), so that records fetched
        // before the rewind are still on their way to the worker when it rewinds.
        let others = requests(2_000, from: 10_000, tokens: otherTokens)
        let amongOthers = refused(refusedAmongOthers, sequence: 20_000)
        let stream = Array(others[..<1_000]) + [amongOthers] + Array(others[1_000...])
        for start in stride(from: 0, to: stream.count, by: 50) {
            try await produce(Array(stream[start..<min(start + 50, stream.count)]), with: harness.producer, ends: &ends, places: &places)
            try await Task.sleep(for: .milliseconds(10))
        }
        let streamed = Set(others.map(\.apnsID) + [refusedAmongOthers])
        do {
            try await harness.collector.waitForAll(streamed, in: outcomes, limit: .seconds(120))
        } catch {
            let (missing, committedRead) = await printMissing(streamed, of: harness, places: places, ends: ends, broker: broker)
            // Tansu 0.6.0 refuses the epoch bump (KIP-360) that librdkafka needs after an abort
            // purged a produce request it had numbered (docs/worker.md, "Exactly-once", Tansu):
            // the worker's abort cannot complete on this broker, so the scenario cannot go on.
            // A broker limitation, recorded as a known issue, not a pass; what must hold even
            // then is that nothing is lost: no committed offset passes a request without an
            // outcome, so a new producer (a restart) processes each of them.
            guard harness.workers.log(of: "w1").contains("Failed to acquire transactional PID") else { throw error }
            let committed = try #require(committedRead, "the group's committed offsets")
            for (partition, missed) in Dictionary(grouping: missing, by: \.partition) {
                let first = missed.map(\.offset).min() ?? 0
                #expect((committed[partition] ?? 0) <= first, "partition \(partition): committed \(committed[partition] ?? 0) passes the request at \(first), which has no outcome")
            }
            withKnownIssue("Tansu 0.6.0 refuses the producer's epoch bump (KIP-360): the abort after the refusal among streaming records cannot complete") {
                throw error
            }
            worker.send(signal: SIGKILL)
            _ = try await worker.waitForExit(limit: .seconds(60))
            return
        }
        // After: everything goes on.
        let after = requests(300, from: 30_000, tokens: tokens)
        try await produce(after, with: harness.producer, ends: &ends, places: &places)
        try await harness.collector.waitForAll(Set(after.map(\.apnsID)), in: outcomes, limit: .seconds(120))

        // The partitions moved on: the group's committed offsets reach the end of every partition.
        let finalEnds = ends
        try await eventually("offsets committed to the end of every requests partition", limit: .seconds(60)) {
            try await committedOffsets(group: harness.workers.group, on: broker.bootstrapServers).filter { finalEnds[$0.key] != nil } == finalEnds
        }
        worker.send(signal: SIGTERM)
        let exit = try await worker.waitForExit(limit: .seconds(60))
        let log = harness.workers.log(of: "w1")
        #expect(exit.exitedNormally && exit.status == 0, "\(log.suffix(3_000))")
        #expect(!log.contains(#""level":"critical""#), "no critical line: \(log.suffix(3_000))")
        #expect(log.components(separatedBy: "worker started").count == 2, "one start: never restarted")
        #expect(log.components(separatedBy: "a transaction that could not commit was aborted").count >= 3, "one rewind per refusal")

        // The final reading, read_committed.
        var written: [String: [KafkaMessage]] = [:]
        for topic in ExactlyOnceTests.outputTopics {
            written[topic] = try await readToEnd(topic, on: broker.bootstrapServers, .readCommitted)
        }
        for id in [refusedAlone, refusedAmongOthers] {
            let deadLetters = written[ExactlyOnceTests.deadLetter, default: []].filter { $0.header("apns-id") == id }
            #expect(deadLetters.count == 1, "\(id): one dead letter")
            let deadLetter = try #require(deadLetters.first)
            #expect(deadLetter.header("dlq-reason") == "OutputRejected")
            #expect(deadLetter.header("dlq-detail")?.contains("The delivery record could not be written to \(ExactlyOnceTests.deliveries)") == true)
            #expect(deadLetter.header("dlq-detail")?.contains("INVALID_RECORD") == true, "\(deadLetter.header("dlq-detail") ?? "")")
            for topic in [ExactlyOnceTests.deliveries, ExactlyOnceTests.launches] {
                #expect(!written[topic, default: []].contains { $0.header("apns-id") == id }, "\(id): nothing in \(topic)")
            }
        }

        // Every other request: its outcome (delivery or dead letter), and its launch, once; the
        // only second copies are those of the one aborted transaction with content that Tansu shows.
        let all = before + others + after
        var copies: [String: Int] = [:]
        for topic in outcomes {
            for record in written[topic, default: []] {
                if let id = record.header("apns-id") { copies[id, default: 0] += 1 }
            }
        }
        let lost = Set(all.map(\.apnsID)).subtracting(copies.keys)
        #expect(lost.isEmpty, "lost: \(lost.prefix(5))")
        for request in before + after { #expect(copies[request.apnsID] == 1, "\(request.kind) \(request.apnsID): one outcome") }
        var aborted: [String: Int] = [:]
        for topic in ExactlyOnceTests.outputTopics {
            let problems = abortedCopies(in: written[topic, default: []], counted: &aborted)
            #expect(problems.isEmpty, "\(topic): \(problems.prefix(3))")
        }
        for request in others {
            let extra = (copies[request.apnsID] ?? 0) - 1
            #expect(extra == 0 || extra == 1, "\(request.apnsID): \(extra + 1) outcomes")
        }
        print(
            "real-broker: exactly-once on Tansu, outputs refused for good: \(all.count + 2) requests, 2 refused deliveries, "
                + "2 dead letters, \(aborted.values.reduce(0, +)) records of an aborted transaction shown by Tansu, 1 worker, 0 restarts")
    }

    /// Checks that the records of `topic` written twice (by `apns-id`; a launch by its request's)
    /// are those of aborted transactions, each written again later: per partition, every first
    /// copy lies in a run of consecutive offsets (one transaction: a transaction marker takes an
    /// offset between two) made of first copies only, and there is at most one such run.
    /// - Returns: what breaks that; `counted` gains the first copies, by `apns-id`.
    static func abortedCopies(in records: [KafkaMessage], counted: inout [String: Int]) -> [String] {
        var problems: [String] = []
        for (partition, inPartition) in Dictionary(grouping: records, by: \.partition) {
            let sorted = inPartition.sorted { $0.offset < $1.offset }
            var seen: Set<String> = []
            var firstCopies: Set<Int64> = []
            let ids = sorted.map { $0.header("apns-id") ?? "" }
            for (index, id) in ids.enumerated() where !id.isEmpty {
                if seen.contains(id) {
                    guard let first = sorted[..<index].firstIndex(where: { $0.header("apns-id") == id }) else { continue }
                    if firstCopies.contains(sorted[first].offset) { problems.append("\(id) written three times") }
                    firstCopies.insert(sorted[first].offset)
                } else {
                    seen.insert(id)
                }
            }
            // Runs of consecutive offsets.
            var runs: [[KafkaMessage]] = []
            for record in sorted {
                if let last = runs.last?.last, last.offset + 1 == record.offset {
                    runs[runs.count - 1].append(record)
                } else {
                    runs.append([record])
                }
            }
            let abortedRuns = runs.filter { run in run.contains { firstCopies.contains($0.offset) } }
            if abortedRuns.count > 1 { problems.append("partition \(partition): \(abortedRuns.count) transactions written again") }
            for run in abortedRuns where !run.allSatisfy({ firstCopies.contains($0.offset) }) {
                problems.append("partition \(partition): a transaction at offset \(run[0].offset) has records written twice and records written once")
            }
            for offset in firstCopies {
                if let id = sorted.first(where: { $0.offset == offset })?.header("apns-id") { counted[id, default: 0] += 1 }
            }
        }
        return problems
    }

    /// Produces the requests at once; `ends` gains, per partition, the offset after the last, and
    /// `places` each request's place in the requests topic, by `apns-id`.
    static func produce(
        _ requests: [TestRequest], with producer: KafkaProducer, ends: inout [Int32: Int64], places: inout [String: TopicPartitionOffset]
    ) async throws {
        let reports = await producer.send(requests.map { $0.record.producerRecord(topic: ExactlyOnceTests.requests) })
        for (request, report) in zip(requests, reports) {
            let delivered = try report.get()
            ends[delivered.partition] = max(ends[delivered.partition] ?? 0, delivered.offset + 1)
            places[request.apnsID] = TopicPartitionOffset(topic: delivered.topic, partition: delivered.partition, offset: delivered.offset)
        }
    }

    /// Prints what a scenario that timed out needs to be understood: the requests with no outcome
    /// (by partition, with their offsets), the group's committed offsets beside the ends, and the
    /// worker's log lines about rewinds, refusals and warnings.
    /// - Returns: where the requests with no outcome were written, and the committed offsets (nil
    ///   when they could not be read).
    static func printMissing(
        _ expected: Set<String>, of harness: ExactlyOnceTests.Harness, places: [String: TopicPartitionOffset], ends: [Int32: Int64],
        broker: TansuBroker
    ) async -> (missing: [TopicPartitionOffset], committed: [Int32: Int64]?) {
        let outcomes = [ExactlyOnceTests.deliveries, ExactlyOnceTests.deadLetter]
        let missing = expected.subtracting(harness.collector.distinctIDs(outcomes))
        var report = "missing: \(missing.count) of \(expected.count) requests\n"
        let byPartition = Dictionary(grouping: missing.compactMap { places[$0] }, by: \.partition)
        for (partition, missed) in byPartition.sorted(by: { $0.key < $1.key }) {
            let offsets = missed.map(\.offset).sorted()
            report += "  partition \(partition): \(offsets.count) missing, offsets \(offsets.first ?? -1)...\(offsets.last ?? -1)"
            report += " (end \(ends[partition] ?? -1)): \(offsets.prefix(40))\n"
        }
        let committed = try? await committedOffsets(group: harness.workers.group, on: broker.bootstrapServers)
        report += "committed: \((committed ?? [:]).sorted { $0.key < $1.key })\nends: \(ends.sorted { $0.key < $1.key })\n"
        let text = harness.workers.log(of: "w1")
        let log = text.split(separator: "\n")
        // A line repeated (librdkafka retrying, say) is shown once, with how many times it came.
        var notable: [(line: Substring, message: Substring, repeats: Int)] = []
        for line in log where ["aborted", "rewind", "went back", "refused", "\"warning\"", "\"error\"", "\"critical\"", "notice"].contains(where: line.contains) {
            let message = line.split(separator: "\"timestamp\"").first ?? line
            if let last = notable.last, last.message == message {
                notable[notable.count - 1].repeats += 1
            } else {
                notable.append((line, message, 1))
            }
        }
        report += "worker log, notable lines (\(notable.count) distinct of \(log.count)):\n"
        report += notable.suffix(80).map { $0.repeats > 1 ? "\($0.line) (\($0.repeats) times)" : String($0.line) }.joined(separator: "\n") + "\n"
        // Tansu 0.6.0 answers a transactional producer's epoch bump (KIP-360: InitProducerId with
        // its current id and epoch) with UNKNOWN_SERVER_ERROR, and librdkafka asks again forever.
        if text.contains("Failed to acquire transactional PID") {
            report += "the worker's producer could not bump its epoch (Tansu 0.6.0 has no KIP-360 bump): its abort never "
                + "completes, so nothing after the rewind is processed (docs/worker.md, \"Exactly-once\", Tansu)\n"
        }
        report += "worker log, last lines:\n\(log.suffix(15).joined(separator: "\n"))"
        print(report)
        return (missing.compactMap { places[$0] }, committed)
    }

    /// The group's committed offsets of the requests topic, by partition.
    static func committedOffsets(group: String, on bootstrapServers: String) async throws -> [Int32: Int64] {
        var configuration = ConsumerConfiguration(bootstrapServers: bootstrapServers, groupID: group)
        configuration.properties = ["fetch.wait.max.ms": "10"]
        let consumer = try KafkaConsumer(configuration: configuration, logger: ExactlyOnceTests.logger)
        let partitions = (0..<Self.partitions).map { TopicPartition(topic: ExactlyOnceTests.requests, partition: $0) }
        let offsets = try await consumer.committed(partitions, timeout: .seconds(10))
        await consumer.close()
        return Dictionary(uniqueKeysWithValues: offsets.map { ($0.partition, $0.offset) })
    }
}
