import Foundation
import Kafka
import Records

/// How a run's requests and responses are accounted for on the output topics, at least once: each
/// must have one delivery, action record or dead letter (none is *lost*); more than one is a
/// *duplicate*, which at-least-once delivery allows after a worker dies, and which a run is
/// expected to count and report.
struct Accounting: Sendable, CustomStringConvertible {
    /// Requests and responses sent.
    var sent: Int
    /// Those without any delivery, action record or dead letter.
    var lost: [String]
    /// Records beyond the first on the deliveries, actions and dead-letter topics, summed over
    /// the requests and responses.
    var duplicateOutputs: Int
    /// Launch records beyond the first of a request or response.
    var duplicateLaunches: Int
    /// Records on the deliveries, actions and dead-letter topics that belong to nothing sent (or
    /// whose value cannot be read).
    var strangers: Int { strangerExamples.count }
    /// Where each stranger is and what it carries (topic, partition, offset, headers), for failure messages.
    var strangerExamples: [String]

    /// Records the output reader read more than once (the same topic, partition and offset): not
    /// duplicates, which are records of their own.
    var rereads: Int

    /// Every duplicate record: first outputs and launches.
    var duplicates: Int { duplicateOutputs + duplicateLaunches }

    /// Duplicates (outputs and launches) that are exact copies of the first record of their
    /// request or response: the same topic, partition, key, value and headers, timestamps in the
    /// value included. What a produce request retried after its broker appended it but went down
    /// before answering writes again on a broker that does not check the producer's sequence
    /// numbers: librdkafka's mock cluster checks them for transactional producers only
    /// (`rd_kafka_mock_validate_records` in 2.8 returns at once without a transactional id).
    /// A worker that decided a record again would write other times in its value.
    var exactCopies: Int

    /// Counts the outputs read by `outputs` for `requests` and `responses`: a delivery or a dead
    /// letter is a request's by its `apns-id`, an action record or a dead letter a response's by
    /// its `traceparent`.
    init(_ outputs: OutputCollector, requests: [TestRequest], responses: [TestResponse] = []) {
        let requestIDs = Set(requests.map(\.apnsID))
        let responseIDs = Set(responses.map(\.traceparent))
        var counts: [String: Int] = [:]
        var strangers: [String] = []
        var positions = Set<String>()
        var rereads = 0
        // The first record of each request or response, by topic: what a later one is compared with.
        var firsts: [String: KafkaMessage] = [:]
        var exactCopies = 0
        func compare(_ record: KafkaMessage, id: String) {
            let place = "\(record.topic)/\(id)"
            guard let first = firsts[place] else {
                firsts[place] = record
                return
            }
            if Self.isExactCopy(record, of: first) { exactCopies += 1 }
        }
        for topic in Pipeline.allAccountingTopics {
            for record in outputs.records(of: topic) {
                // The same record read twice is the reader's repeat, not a duplicate output.
                guard positions.insert("\(topic)/\(record.partition)/\(record.offset)").inserted else {
                    rereads += 1
                    continue
                }
                let trace = record.header("traceparent")
                let apnsID = record.header("apns-id")
                if topic != Pipeline.deadLetter, record.json == nil {
                    strangers.append("\(topic)[\(record.partition)]@\(record.offset): a value that is not a JSON object")
                } else if topic != Pipeline.actions, let apnsID, requestIDs.contains(apnsID) {
                    counts[apnsID, default: 0] += 1
                    compare(record, id: apnsID)
                } else if topic != Pipeline.deliveries, let trace, responseIDs.contains(trace) {
                    counts[trace, default: 0] += 1
                    compare(record, id: trace)
                } else {
                    let headers = record.headers.map { "\($0.name)=\($0.value.map { String(decoding: $0.prefix(60), as: UTF8.self) } ?? "nil")" }
                    strangers.append("\(topic)[\(record.partition)]@\(record.offset) headers \(headers) value \(record.value.map { String(decoding: $0.prefix(120), as: UTF8.self) } ?? "nil")")
                }
            }
        }
        sent = requests.count + responses.count
        lost = requests.map(\.apnsID).filter { counts[$0] == nil } + responses.map(\.traceparent).filter { counts[$0] == nil }
        duplicateOutputs = counts.values.reduce(0) { $0 + $1 - 1 }
        strangerExamples = strangers
        self.rereads = rereads
        // A launch carries the request's apns-id, or the response's traceparent.
        var launches: [String: Int] = [:]
        for record in outputs.records(of: Pipeline.launches) {
            let id = record.header("traceparent").flatMap { responseIDs.contains($0) ? $0 : nil } ?? record.header("apns-id") ?? "?"
            launches[id, default: 0] += 1
            compare(record, id: id)
        }
        self.exactCopies = exactCopies
        duplicateLaunches = launches.values.reduce(0) { $0 + max(0, $1 - 1) }
    }

    /// The requests and responses (by `apns-id`, or `traceparent`) with more records on `topics`
    /// than their input's copies (`copies`, 1 when not named), exact copies of their first record
    /// aside: a request the requests topic holds twice is rightly decided twice.
    static func writtenMoreThanHeld(_ outputs: OutputCollector, topics: [String], copies: [String: Int]) -> [String] {
        var firsts: [String: KafkaMessage] = [:]
        var written: [String: Int] = [:]
        for topic in topics {
            for record in outputs.records(of: topic) {
                let id = record.header("traceparent") ?? record.header("apns-id") ?? "?"
                if let first = firsts[id], isExactCopy(record, of: first) { continue }
                if firsts[id] == nil { firsts[id] = record }
                written[id, default: 0] += 1
            }
        }
        return written.filter { $0.value > (copies[$0.key] ?? 1) }.keys.sorted()
    }

    /// Whether `record` is an exact copy of `first` (``exactCopies``): the same partition, key,
    /// value and headers, at another offset.
    static func isExactCopy(_ record: KafkaMessage, of first: KafkaMessage) -> Bool {
        first.partition == record.partition && first.key == record.key && first.value == record.value && first.headers == record.headers
    }

    var description: String {
        "\(lost.count) lost, \(duplicates) duplicates (\(duplicateOutputs) deliveries, actions or dead letters, "
            + "\(duplicateLaunches) launches; \(exactCopies) exact copies), \(rereads) read twice, \(strangers) of nothing sent"
    }
}

/// The one line a real-broker test prints about its run, which `scripts/test` shows in its report:
/// records, workers, kills, rebalances, lost, duplicates and time.
struct RunFigures: CustomStringConvertible {
    /// The test's short name.
    var name: String
    var requests: Int
    var responses: Int
    /// `serve` processes started, restarts included.
    var workers: Int
    /// Workers killed with SIGKILL.
    var kills: Int
    /// Assignments logged by the workers (`partitions assigned`): one per member per rebalance.
    var assignments: Int
    var accounting: Accounting
    var seconds: Double
    /// Anything else worth saying (the outage's length).
    var note: String = ""

    var description: String {
        "real-broker: \(name): \(requests) requests + \(responses) responses, \(workers) workers, "
            + "\(kills) SIGKILL, \(assignments) assignments (rebalances), \(accounting.lost.count) lost, "
            + "\(accounting.duplicates) duplicates, \(String(format: "%.1f", seconds)) s" + (note.isEmpty ? "" : ", \(note)")
            + (accounting.rereads > 0 ? ", \(accounting.rereads) records read twice by the test's reader" : "")
            + (accounting.strangers > 0 ? ", \(accounting.strangers) outputs of nothing sent" : "")
    }
}
