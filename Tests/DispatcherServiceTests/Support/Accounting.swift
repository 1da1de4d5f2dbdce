import Foundation

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
    /// Records on the deliveries, actions and dead-letter topics that belong to nothing sent.
    var strangers: Int

    /// Every duplicate record: first outputs and launches.
    var duplicates: Int { duplicateOutputs + duplicateLaunches }

    /// Counts the outputs read by `outputs` for `requests` and `responses`.
    init(_ outputs: OutputCollector, requests: [TestRequest], responses: [TestResponse] = []) {
        let requestCounts = Outcomes(outputs).countsByID
        let responseCounts = Outcomes(outputs, of: .responses).countsByID
        let requestIDs = requests.map(\.apnsID)
        let responseIDs = responses.map(\.traceparent)
        sent = requests.count + responses.count
        lost = requestIDs.filter { requestCounts[$0] == nil } + responseIDs.filter { responseCounts[$0] == nil }
        let firstOutputs = requestIDs.reduce(0) { $0 + (requestCounts[$1] ?? 0) } + responseIDs.reduce(0) { $0 + (responseCounts[$1] ?? 0) }
        duplicateOutputs = firstOutputs - (sent - lost.count)
        strangers = outputs.count(Pipeline.allAccountingTopics) - firstOutputs
        // A launch carries the request's apns-id, or the response's traceparent.
        let ids = Set(requestIDs).union(responseIDs)
        var launches: [String: Int] = [:]
        for record in outputs.records(of: Pipeline.launches) {
            let id = record.header("traceparent").flatMap { ids.contains($0) ? $0 : nil } ?? record.header("apns-id") ?? "?"
            launches[id, default: 0] += 1
        }
        duplicateLaunches = launches.values.reduce(0) { $0 + max(0, $1 - 1) }
    }

    var description: String {
        "\(lost.count) lost, \(duplicates) duplicates (\(duplicateOutputs) deliveries, actions or dead letters, "
            + "\(duplicateLaunches) launches)"
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
    }
}
