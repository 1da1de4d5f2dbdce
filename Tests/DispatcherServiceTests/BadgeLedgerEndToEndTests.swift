import Dispatcher
import DispatcherService
import Foundation
import JSON
import Kafka
import Records
import Synchronization
import TestSupport
import Testing

/// SEMANTICS section 21 in `serve` across a group on a real broker (Tansu): 2,000 increments to
/// 100 devices of an app with a badge ledger, two workers, one SIGKILLed mid-stream and started
/// again. Afterwards each device's last badges record is compared with the count one offline
/// `dispatch` run over the same requests gives.
///
/// - Exactly-once: the count equals the offline count: no increment lost, none applied twice.
///   Tansu 0.6.0 shows an aborted transaction's records to `read_committed` readers (the restore
///   among them: ExactlyOnceTests); a device whose badges records were in the transaction the kill
///   left open is counted on from the aborted count, so its increments there are applied twice
///   (a Kafka broker hides them). The test names those devices, and only those may differ, by
///   exactly those increments.
/// - At-least-once: a request processed but not committed when its worker died is processed
///   again, and its increment applied again (docs/worker.md, "Partitioned state"): each device's
///   count is the sum of the increments of every badges record written for it, duplicates
///   included, never less than the offline count.
@Suite(
    "The badge ledger across workers on a real broker (RealBroker: Tansu)",
    .enabled(if: TansuBroker.isInstalled, "needs Tansu: scripts/install-tansu (scripts/test installs it)"),
    .serialized
)
struct BadgeLedgerEndToEndTests {
    static let bundleID = "com.example.mail"
    static let badges = "notifications.badges"
    static let devices = 100
    static let perDevice = 20

    /// Device `index`'s token.
    static func token(_ index: Int) -> String { "b0" + String(repeating: "0", count: 58) + String(format: "%04x", index) }

    /// Request `number` of device `device`: its identifier and increment (1 to 3).
    static func request(device: Int, number: Int) -> (id: String, increment: Int, line: String, record: ProducerRecord) {
        let id = String(format: "b0000000-0000-4000-8000-%04x%08x", device, number)
        let increment = 1 + (device * 7 + number * 3) % 3
        let headers = [("apns-topic", bundleID), ("apns-id", id), ("badge-increment", "+\(increment)")]
        let value = #"{"aps":{"alert":{"title":"Mail \#(number)","body":"One more"}}}"#
        let line = #"{"key":"\#(token(device))","headers":{"# + headers.map { #""\#($0.0)":"\#($0.1)""# }.joined(separator: ",")
            + #"},"value":\#(value)}"#
        let record = ProducerRecord(
            topic: Pipeline.requests, key: Array(token(device).utf8), value: Array(value.utf8),
            headers: headers.map { RecordHeader(name: $0.0, value: $0.1) })
        return (id, increment, line, record)
    }

    @Test(
        "2,000 increments to 100 devices, 2 workers, one SIGKILLed mid-stream: each device's count as offline (exactly-once) or counted again where replayed (at-least-once)",
        arguments: [DeliveryGuarantee.exactlyOnce, .atLeastOnce])
    func killedMidStream(guarantee: DeliveryGuarantee) async throws {
        let started = ContinuousClock.now
        let apps = """
              \(Self.bundleID):
                badgeLedger: true
                defaultAppState: notRunning
            """
        try await Pipeline.with(
            on: try await .tansu(), partitions: 4, dispatch: "  guarantee: \(guarantee.rawValue)", apps: apps,
            kafkaProperties: RealBrokerTests.kafkaProperties
        ) { pipeline in
            // Round by round, every device once per round: the devices' requests interleave.
            let requests = (0..<Self.perDevice).flatMap { number in (0..<Self.devices).map { Self.request(device: $0, number: number) } }
            let increments = Dictionary(uniqueKeysWithValues: requests.map { ($0.id, $0.increment) })
            func send(_ part: ArraySlice<(id: String, increment: Int, line: String, record: ProducerRecord)>) async throws {
                for report in await pipeline.producer.send(part.map(\.record)) { _ = try report.get() }
            }
            try pipeline.startWorker("w1")
            try pipeline.startWorker("w2")
            let half = requests.count / 2
            try await send(requests[..<half])
            // Killed once its first outputs show: mid-stream, a thousand still to come.
            try await pipeline.outputs.waitFor(200, in: Pipeline.accountingTopics, limit: .seconds(120))
            let killed = try #require(pipeline.worker(named: "w1"))
            killed.send(signal: SIGKILL)
            _ = try await killed.waitForExit(limit: .seconds(20))
            // Exactly-once: the badges records of the transaction the kill left open, which Tansu
            // will show to readers of committed transactions once it is aborted.
            var aborted: [KafkaMessage] = []
            if guarantee == .exactlyOnce {
                aborted = try await ExactlyOnceTests.openTransactionRecords(of: [Self.badges], on: pipeline.bootstrapServers)
            }
            try pipeline.startWorker("w1")
            try await send(requests[half...])
            try await pipeline.outputs.waitForAll(Set(requests.map(\.id)), in: Pipeline.accountingTopics, limit: .seconds(240))
            #expect(pipeline.outputs.records(of: Pipeline.deadLetter).isEmpty)

            // The offline run over the same requests: each device's last badges record.
            let offline = try await BuiltBinary.run(
                ["dispatch", "--config", pipeline.configPath], input: requests.map(\.line).joined(separator: "\n"))
            var expected: [String: Int] = [:]
            for line in offline.standardOutput.split(separator: "\n") {
                guard let object = try? JSONValue(parsing: Array(line.utf8)).objectValue, object["topic"] == .string(Self.badges),
                    case .string(let key)? = object["key"], case .number(let count)? = object["value"]?[path: ["count"]]
                else { continue }
                expected[key] = Int(count.text)
            }
            #expect(expected.count == Self.devices, "\(offline.standardError.suffix(500))")

            // The served counts: a device's badges record is written after its delivery is
            // acknowledged, so read the topic until every device's last request is in it.
            let lastIDs = Set((0..<Self.devices).map { Self.request(device: $0, number: Self.perDevice - 1).id })
            let reading = Mutex<[KafkaMessage]>([])
            try await eventually("every device's last increment in the badges topic", limit: .seconds(60)) {
                let records = try await readToEnd(Self.badges, on: pipeline.bootstrapServers, .readCommitted)
                reading.withLock { $0 = records }
                return lastIDs.isSubset(of: Set(records.compactMap { $0.header("apns-id") }))
            }
            let written = reading.withLock { $0 }
            let abortedPlaces = Set(aborted.map(\.position))
            var records: [String: [KafkaMessage]] = [:]
            for record in written { records[String(decoding: record.key ?? [], as: UTF8.self), default: []].append(record) }
            var replayed = 0
            var tainted = 0
            for (key, count) in expected.sorted(by: { $0.key < $1.key }) {
                let history = records[key] ?? []
                let served = history.last.flatMap { $0.value.flatMap { try? JSONValue(parsing: $0) } }?[path: ["count"]]
                let ids = history.compactMap { $0.header("apns-id") }
                // Every request of the device changed its count at least once: nothing lost.
                let device = Int(key.prefix(64).suffix(4), radix: 16) ?? -1
                let missing = (0..<Self.perDevice).map { Self.request(device: device, number: $0).id }.filter { !ids.contains($0) }
                #expect(missing.isEmpty, "\(key): increments never counted: \(missing)")
                switch guarantee {
                case .exactlyOnce:
                    let abortedHere = history.filter { abortedPlaces.contains($0.position) }
                    let counted = history.filter { !abortedPlaces.contains($0.position) }.compactMap { $0.header("apns-id") }
                    #expect(Set(counted).count == counted.count, "\(key): an increment counted twice among committed records: \(counted)")
                    // Tansu shows the aborted records to the restore: counted on from them.
                    let shownAborted = abortedHere.compactMap { $0.header("apns-id") }.reduce(0) { $0 + (increments[$1] ?? 0) }
                    if !abortedHere.isEmpty { tainted += 1 }
                    #expect(served == .number(JSONNumber(count + shownAborted)), "\(key): served \(served.map { "\($0)" } ?? "none"), offline \(count), aborted increments \(shownAborted)")
                case .atLeastOnce:
                    let total = ids.reduce(0) { $0 + (increments[$1] ?? 0) }
                    replayed += ids.count - Set(ids).count
                    #expect(served == .number(JSONNumber(total)), "\(key): served \(served.map { "\($0)" } ?? "none"), the increments of its records \(total)")
                    #expect(total >= count, "\(key): counted less than offline (\(total) < \(count))")
                }
            }
            let seconds = (ContinuousClock.now - started).components.seconds
            print(
                "real-broker: badge ledger, \(guarantee.rawValue): \(requests.count) increments to \(Self.devices) devices, 2 workers, 1 SIGKILL and restart; "
                    + (guarantee == .exactlyOnce
                        ? "\(aborted.count) badges record(s) of the aborted transaction, \(tainted) device(s) counted on from them (Tansu shows them to the restore); every other count as offline"
                        : "\(replayed) increment(s) applied again after the SIGKILL; every count the sum of its records, none below offline")
                    + ", \(seconds) s")
        }
    }
}
