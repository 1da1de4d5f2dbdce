import Dispatcher
import Foundation
import Kafka
import Records
import TestSupport

/// The outputs a `read_committed` reader reads at the end of an exactly-once run on Tansu, with
/// the records of the transactions a fault left open set aside.
///
/// Tansu 0.6.0 hides an open transaction's records from `read_committed` readers but shows them
/// once the transaction is aborted (``ExactlyOnceTests`` says more); a Kafka broker never shows
/// them. So the records a worker had written in the transaction open when it was cut off or
/// frozen are found while it is (``openTransactionRecords(partitions:on:)``: written, beyond the
/// last stable offset of the partitions only it writes) and left out here, as a Kafka reader
/// would never see them. Every other record counts: a request with none is lost, one with two is
/// a duplicate.
struct CommittedOutputs: Sendable, CustomStringConvertible {
    /// Requests with no delivery or dead letter outside the records set aside.
    var lost: [String]
    /// Deliveries and dead letters beyond the first of a request, outside the records set aside.
    var duplicates: Int
    /// Launches beyond the first of a request, outside the records set aside.
    var duplicateLaunches: Int
    /// The records set aside that were read (those of the aborted transactions Tansu shows).
    var setAside: Int
    /// Deliveries and dead letters beyond the first of a request, the records set aside included.
    var rawDuplicates: Int
    /// The partitions of the records set aside for being written after the marks.
    var partitionsWrittenAfter: Set<Int32>
    /// Where the counted outcomes beyond a request's first lie, for a failure's message: per
    /// output partition, how many, their offsets and when they were written.
    var duplicatePlaces: String = ""

    /// The output topics whose records are counted.
    static let topics = [Pipeline.deliveries, Pipeline.launches, Pipeline.deadLetter]

    /// Reads the output topics `read_committed` to their ends and counts `requests`' outputs,
    /// leaving out the records at `setAside`, and those at or beyond `writtenAfter` (the
    /// partitions' ends when a zombie went on: ``ends(partitions:on:)``) created before
    /// `createdBefore` (when the zombie's transaction was aborted): what it wrote into its
    /// transaction after it went on. Records written after that moment are someone else's, and count.
    static func read(
        requests: [TestRequest], setAside: Set<TopicPartitionOffset>, writtenAfter marks: [TopicPartition: Int64] = [:],
        createdBefore: Date = .distantFuture, on bootstrapServers: String
    ) async throws -> CommittedOutputs {
        var outcomes: [String: Int] = [:]
        var raw: [String: Int] = [:]
        var launches: [String: Int] = [:]
        var setAsideRead = 0
        var partitionsWrittenAfter: Set<Int32> = []
        var counted: [String: [KafkaMessage]] = [:]
        for topic in topics {
            for record in try await readToEnd(topic, on: bootstrapServers, .readCommitted, limit: .seconds(120)) {
                guard let id = record.header("apns-id") else { continue }
                let isWrittenAfter =
                    marks[record.position.topicPartition].map { record.offset >= $0 } == true
                    && (record.timestamp ?? .distantPast) <= createdBefore
                if isWrittenAfter { partitionsWrittenAfter.insert(record.partition) }
                let isSetAside = setAside.contains(record.position) || isWrittenAfter
                if isSetAside { setAsideRead += 1 }
                if !isSetAside { counted[id, default: []].append(record) }
                if topic == Pipeline.launches {
                    if !isSetAside { launches[id, default: 0] += 1 }
                } else {
                    raw[id, default: 0] += 1
                    if !isSetAside { outcomes[id, default: 0] += 1 }
                }
            }
        }
        return CommittedOutputs(
            lost: requests.map(\.apnsID).filter { outcomes[$0] == nil },
            duplicates: outcomes.values.reduce(0) { $0 + $1 - 1 },
            duplicateLaunches: launches.values.reduce(0) { $0 + max(0, $1 - 1) },
            setAside: setAsideRead,
            rawDuplicates: raw.values.reduce(0) { $0 + $1 - 1 }, partitionsWrittenAfter: partitionsWrittenAfter,
            duplicatePlaces: places(ofRepeated: counted))
    }

    /// Per output partition, the counted records that repeat an earlier one of their request
    /// (the later by write time, per topic): how many, their offsets and their write times
    /// (``FailurePlaces/millisecond(_:)``).
    static func places(ofRepeated counted: [String: [KafkaMessage]]) -> String {
        var repeated: [String: [KafkaMessage]] = [:]
        for records in counted.values {
            for (_, same) in Dictionary(grouping: records, by: \.topic) where same.count > 1 {
                let later = same.sorted { ($0.timestamp ?? .distantPast) < ($1.timestamp ?? .distantPast) }.dropFirst()
                for record in later { repeated[FailurePlaces.partition(record.partition, of: record.topic), default: []].append(record) }
            }
        }
        func ms(_ record: KafkaMessage) -> Int64 { record.timestamp.map(FailurePlaces.millisecond) ?? -1 }
        return repeated.keys.sorted().map { key in
            let records = repeated[key]!
            let offsets = records.map(\.offset)
            let times = records.map(ms)
            return "\(key): \(records.count) at \(offsets.min()!)-\(offsets.max()!), ms \(times.min()!)-\(times.max()!)"
        }.joined(separator: "; ")
    }

    /// Waits until every request has a delivery or dead letter among the records `collector`
    /// (reading `read_uncommitted`) read, those at `setAside` left out: the workers have written
    /// everything, whether or not their transactions could commit yet.
    static func waitUntilEveryRequestWritten(
        _ requests: [TestRequest], in collector: OutputCollector, excluding setAside: Set<TopicPartitionOffset>,
        limit: Duration = .seconds(180)
    ) async throws {
        let ids = Set(requests.map(\.apnsID))
        try await eventually("every request's outputs written", limit: limit) {
            var written = Set<String>()
            for topic in Pipeline.accountingTopics {
                for record in collector.records(of: topic) where !setAside.contains(record.position) {
                    if let id = record.header("apns-id") { written.insert(id) }
                }
            }
            try await Task.sleep(for: .milliseconds(200))
            return ids.isSubset(of: written)
        }
    }

    /// The end of each partition of the output topics (the offset after its last record, all
    /// written records counted), for ``read(requests:setAside:writtenAfter:on:)``.
    static func ends(partitions: Int32, on bootstrapServers: String) async throws -> [TopicPartition: Int64] {
        var ends: [TopicPartition: Int64] = [:]
        for topic in topics {
            for partition in 0..<partitions { ends[TopicPartition(topic: topic, partition: partition)] = 0 }
            for record in try await readToEnd(topic, on: bootstrapServers, .readUncommitted) {
                ends[record.position.topicPartition] = max(ends[record.position.topicPartition] ?? 0, record.offset + 1)
            }
        }
        return ends
    }

    /// The records of the output topics in `partitions` that are written (`read_uncommitted`) and
    /// beyond the last stable offset (where `read_committed` stops): those of the transactions
    /// open there. Called while the only worker writing those partitions cannot write (frozen, cut
    /// off), they are that worker's open transaction. Read until two readings agree, so that
    /// produce requests still on their way when it stopped are counted too: no longer, since the
    /// reading must end before another worker is given the partitions (a session's timeout
    /// after the fault), and since a frozen or cut-off worker's last requests left it well before
    /// (the test waited for its outputs first), unlike a killed worker's (``OpenRecordsSettling``).
    static func openTransactionRecords(partitions: Set<Int32>, on bootstrapServers: String) async throws -> Set<TopicPartitionOffset> {
        var settling = OpenRecordsSettling(readingsAlike: 2, span: .zero, pause: .zero)
        while true {
            let open = try await withThrowingTaskGroup(of: [KafkaMessage].self) { group in
                for topic in topics { group.addTask { try await ExactlyOnceTests.openRecords(of: topic, on: bootstrapServers) } }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let places = Set(open.filter { partitions.contains($0.partition) }.map(\.position))
            if try await settling.settled(places) { return places }
        }
    }

    var description: String {
        "\(lost.count) lost, \(duplicates) duplicates (\(duplicateLaunches) launches), \(setAside) records of aborted "
            + "transactions set aside (\(rawDuplicates) duplicates with them)"
            + (duplicatePlaces.isEmpty ? "" : "; repeated outcomes: \(duplicatePlaces)")
    }
}

/// When the readings of a stopped worker's open transaction have settled: by default, the same
/// records three readings in a row, a quarter of a second apart, over at least a second. Two
/// readings that agree at once are not enough on a loaded machine: a produce request the process
/// had written to its socket before it died may reach the broker's log after both (the broker
/// starved of CPU), and its records, taken for committed, would count as duplicates once the
/// transaction is aborted and its requests are processed again.
struct OpenRecordsSettling {
    /// How long the readings may take to settle.
    static let limit: Duration = .seconds(60)

    /// How many readings in a row must agree, the least time from the first reading, and the
    /// pause after a reading that did not settle.
    let readingsAlike: Int
    let span: Duration
    let pause: Duration
    private let started = ContinuousClock.now
    private var last: Set<TopicPartitionOffset>?
    private var alike = 0

    init(readingsAlike: Int = 3, span: Duration = .seconds(1), pause: Duration = .milliseconds(250)) {
        self.readingsAlike = readingsAlike
        self.span = span
        self.pause = pause
    }

    /// Notes a reading; true once the readings have settled on it, else false after the pause
    /// before the next reading.
    /// - Throws: ``TimedOut`` when they have not settled within ``limit``.
    mutating func settled(_ reading: Set<TopicPartitionOffset>) async throws -> Bool {
        alike = reading == last ? alike + 1 : 1
        last = reading
        let elapsed = ContinuousClock.now - started
        if alike >= readingsAlike && elapsed >= span { return true }
        if elapsed > Self.limit { throw TimedOut(what: "the open transaction's records to settle (\(reading.count) now)") }
        if pause > .zero { try await Task.sleep(for: pause) }
        return false
    }
}

/// One line of figures a fault test prints (`faults: ...`), which `scripts/test` shows.
struct FaultFigures: CustomStringConvertible {
    var name: String
    var guarantee: DeliveryGuarantee
    var requests: Int
    /// The faults applied, in words.
    var faults: String
    var lost: Int
    var duplicates: Int
    /// Workers started again after they exited by themselves.
    var restarts: Int
    /// From the end of the fault until the group was whole and its lag 0.
    var recovery: Duration?
    var seconds: Double
    var note: String = ""

    var description: String {
        let recovered = recovery.map { String(format: "%.1f s", Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18) } ?? "-"
        return "faults: \(name) (\(guarantee.rawValue)): \(requests) requests; \(faults); \(lost) lost, \(duplicates) duplicates, "
            + "\(restarts) restarts, recovered in \(recovered), \(String(format: "%.1f", seconds)) s in all"
            + (note.isEmpty ? "" : "; \(note)")
    }
}
