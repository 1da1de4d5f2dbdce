import ChildProcesses
import Dispatcher
import DispatcherService
import Foundation
import JSON
import Kafka
import Records

/// The end of `bench soak`: the outputs and the activities changelog read whole (`read_committed`),
/// counted per request, and the activities' states compared with one offline `dispatch` run.
struct SoakVerdict: Sendable {
    /// The report, one figure a line.
    var text: String
    /// Nothing lost, no state different, and (exactly-once) no duplicate outside the transactions
    /// the kills left open.
    var passed: Bool

    /// Reads, counts and compares.
    /// - Parameters:
    ///   - open: exactly-once: the records of the transactions the kills left open (aborted by
    ///     the restarts; Tansu shows them to `read_committed` readers all the same).
    ///   - tainted: exactly-once: the requests whose state changes were among them.
    ///   - checkRetention: the mock cluster: fail when a partition lost its oldest records.
    static func judge(
        workload: SoakWorkload, bootstrap: String, topics: TopicSettings, exactlyOnce: Bool, open: Set<TopicPartitionOffset>,
        tainted: Set<String>, configuration: URL, binary: String, directory: URL, checkRetention: Bool
    ) async throws -> SoakVerdict {
        var lines: [String] = []
        var passed = true
        let deliveries = try await SoakReading.readToEnd(topics.deliveries, on: bootstrap, .readCommitted)
        let deadLetters = try await SoakReading.readToEnd(topics.deadLetter, on: bootstrap, .readCommitted)
        let changelog = try await SoakReading.readToEnd(topics.activities, on: bootstrap, .readCommitted)
        if checkRetention {
            // ALO on the mock: no control records, so each partition's first offset is 0 unless
            // the mock dropped its oldest records (about 5 MiB a partition).
            var first: [TopicPartition: Int64] = [:]
            for record in deliveries + deadLetters + changelog {
                let place = TopicPartition(topic: record.topic, partition: record.partition)
                first[place] = min(first[place] ?? .max, record.offset)
            }
            let dropped = first.filter { $0.value > 0 }.keys.map(\.description).sorted()
            if !dropped.isEmpty {
                lines.append("  RETENTION            the mock dropped the oldest records of \(dropped.joined(separator: ", ")): fewer activities or more partitions")
                passed = false
            }
        }

        // Outcomes of the direct requests, with and without the open transactions' records.
        var outcomes: [String: Int] = [:]
        var rawOutcomes: [String: Int] = [:]
        let requestIDs = workload.directIDs + workload.storedIDs
        let direct = Set(requestIDs)
        for record in deliveries + deadLetters {
            guard let id = record.headerText("apns-id"), direct.contains(id) else { continue }
            rawOutcomes[id, default: 0] += 1
            if !open.contains(record.position) { outcomes[id, default: 0] += 1 }
        }
        // Lost: no outcome record at all. Exactly-once on Tansu: a request whose only outcome is
        // among the records set aside is reported apart; such a record may be committed (the
        // soak cannot tell an aborted transaction from a committed one behind another open one).
        let lostDirect = requestIDs.filter { (rawOutcomes[$0] ?? 0) == 0 }
        let onlySetAside = requestIDs.filter { (rawOutcomes[$0] ?? 0) > 0 && (outcomes[$0] ?? 0) == 0 }
        let duplicateOutcomes = outcomes.values.reduce(0) { $0 + max(0, $1 - 1) }
        let rawDuplicates = rawOutcomes.values.reduce(0) { $0 + max(0, $1 - 1) }
        let duplicatedUntainted = outcomes.filter { $0.value > 1 && !tainted.contains($0.key) }.keys.sorted()

        // Broadcasts: one delivery per subscriber never ended.
        var reached: [String: Int] = [:]
        for record in deliveries where !open.contains(record.position) {
            guard let object = record.jsonObject, object["channelId"] != nil, let id = record.headerText("apns-id") else { continue }
            reached["\(id)/\(record.keyText)", default: 0] += 1
        }
        var lostBroadcast = 0
        var expectedBroadcast = 0
        for (id, tokens) in workload.broadcastReach {
            for token in tokens {
                expectedBroadcast += 1
                if (reached["\(id)/\(token)"] ?? 0) == 0 && !tainted.contains(id) { lostBroadcast += 1 }
            }
        }
        let duplicateBroadcast = reached.values.reduce(0) { $0 + max(0, $1 - 1) }
        // Exactly-once on Tansu: a broadcast whose forwarded commands were in an aborted
        // transaction is executed from them too (Tansu shows them to the consumer).
        let duplicateBroadcastUntainted = reached.filter { $0.value > 1 && !tainted.contains(String($0.key.prefix { $0 != "/" })) }.count

        // The activities' final states, served against one offline run.
        let input = directory.appendingPathComponent("soak-input.jsonl")
        let output = directory.appendingPathComponent("dispatch-output.jsonl")
        try Data(workload.all.map { $0.line(requestsTopic: topics.requests) }.joined(separator: "\n").utf8).write(to: input)
        let offline = try SpawnedProcess(
            binary, ["dispatch", "--config", configuration.path], input: .file(input.path), output: .file(output.path),
            errorOutput: .file(directory.appendingPathComponent("dispatch.log").path))
        let termination = await offline.waitForExit(limit: .seconds(600))
        var expected: [String: JSONValue] = [:]
        var shownOffline: Set<String> = []
        let offlineText = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        for line in offlineText.split(separator: "\n") {
            guard let object = try? JSONValue(parsing: Array(line.utf8)).objectValue else { continue }
            if object["topic"] == .string(topics.deliveries), case .string(let id)? = object["headers"]?.objectValue?["apns-id"],
                object["value"]?.objectValue?["disposition"] != .string("discarded"), workload.storedIDs.contains(id)
            {
                shownOffline.insert(id)
            }
            guard object["topic"] == .string(topics.activities), case .string(let key)? = object["key"] else { continue }
            expected[key] = object["value"] ?? .null
        }
        var served: [String: JSONValue] = [:]
        // Every record, set-aside ones included: an aborted change is redone after its abort (a
        // later record), or the redo finds it restored and writes nothing, its result the same.
        for record in changelog {
            served[record.keyText] = record.value.flatMap { try? JSONValue(parsing: $0) } ?? .null
        }
        let differing = Set(served.keys).union(expected.keys).filter { served[$0] != expected[$0] }.sorted()
        let offlineRan = !termination.killed && expected.count == workload.tokens.count

        // Stored notifications: each one the offline run shows (the last one per device: APNs
        // keeps one, so the one before is superseded) is shown when its device comes back.
        var shown: [String: Int] = [:]
        let stored = Set(workload.storedIDs)
        for record in deliveries where !open.contains(record.position) {
            guard let id = record.headerText("apns-id"), stored.contains(id), record.jsonObject?["disposition"] != .string("discarded") else { continue }
            shown[id, default: 0] += 1
        }
        let neverShown = shownOffline.subtracting(shown.keys)
        let lostStored = neverShown.subtracting(tainted)
        let shownAgain = shown.values.reduce(0) { $0 + max(0, $1 - 1) }
        let shownWrongly = Set(shown.keys).subtracting(shownOffline)

        lines.append(
            "  final states         \(differing.isEmpty && offlineRan ? "equal" : "DIFFERENT") (\(served.count) activities served, \(expected.count) offline"
                + (differing.isEmpty ? ")" : "; \(differing.count) differ, e.g. \(differing.prefix(3).joined(separator: ", ")))"))
        lines.append("  requests             \(requestIDs.count) to a device or an activity: \(lostDirect.count) without an outcome (lost), \(duplicateOutcomes) duplicate outcomes"
                + (exactlyOnce ? " outside the records set aside; \(onlySetAside.count) whose only outcome is among them" : ""))
        lines.append(
            "  broadcast deliveries \(expectedBroadcast) to subscribers never ended: \(lostBroadcast) lost, \(duplicateBroadcast) duplicates"
                + (exactlyOnce ? " (\(duplicateBroadcastUntainted) of broadcasts none of whose commands were set aside)" : ""))
        lines.append(
            "  stored notifications \(workload.storedIDs.count), \(shownOffline.count) shown offline (the rest superseded): \(lostStored.count) never shown (lost), "
                + "\(shownWrongly.count) shown that offline were not, \(shownAgain) shown again")
        lines.append("  dead letters         \(deadLetters.count)")
        if exactlyOnce {
            lines.append(
                "  exactly-once         \(open.count) records of transactions the kills left open set aside (Tansu shows aborted records: \(rawDuplicates) raw duplicate outcomes); "
                    + "\(tainted.count) requests with state changes among them (\(neverShown.count - lostStored.count) stored notifications never shown, their aborted tombstone restored)")
            lines.append("  duplicates outside   \(duplicatedUntainted.count) requests\(duplicatedUntainted.isEmpty ? "" : ", e.g. \(duplicatedUntainted.prefix(3).joined(separator: ", "))")")
            if !duplicatedUntainted.isEmpty || duplicateBroadcastUntainted > 0 || shownAgain > 0 { passed = false }
        }
        if !differing.isEmpty || !offlineRan || !lostDirect.isEmpty || lostBroadcast > 0 || !lostStored.isEmpty || !shownWrongly.isEmpty { passed = false }
        if !offlineRan { lines.append("  the offline dispatch run failed: see \(directory.path)/dispatch.log") }
        lines.append("  verdict              \(passed ? "PASS" : "FAIL")")
        if !differing.isEmpty {
            for key in differing.prefix(5) {
                let history = changelog.filter { $0.keyText == key }.map { record in
                    "p\(record.partition)@\(record.offset) \(record.headerText("apns-id") ?? record.headerText("apns-request-id") ?? "?")"
                }
                lines.append("    \(key.prefix(16))…: served \(served[key]?.compactText ?? "none"), offline \(expected[key]?.compactText ?? "none"); changelog \(history.joined(separator: ", "))")
            }
        }
        return SoakVerdict(text: lines.joined(separator: "\n"), passed: passed)
    }
}
