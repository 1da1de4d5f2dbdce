import DispatcherService
import Foundation
import Kafka
import Notifications
import Testing
import TestSupport

/// The operations side of `serve` against the embedded broker: `/metrics`, the health endpoints,
/// the metrics topic and `top`, and the JSON log lines.
@Suite("serve operations: metrics, health, metrics topic, logs", .serialized)
struct OperationsTests {
    static let prefix = "notification_dispatcher"

    @Test("a real run: exact counters, observed histograms, lag back to 0, snapshots with the totals, top renders them")
    func liveRun() async throws {
        try await Pipeline.with(apps: EndToEndTests.apps(webhookURL: "http://127.0.0.1:9/unused")) { pipeline in
            let collector = try OutputCollector(
                bootstrapServers: pipeline.bootstrapServers, topics: [Pipeline.metrics], logger: pipeline.logger)
            try await withCleanUp(of: collector, { await $0.close() }) { snapshots in
                let worker = try pipeline.startWorker("worker")
                let endpoint = try await Self.endpoint(of: "worker", in: pipeline)

                // Ready only once the group is joined (the assignment is logged before readiness flips).
                try await eventually("the worker to be ready", limit: .seconds(60)) {
                    let answer = try await endpoint.get("/health/ready")
                    #expect(answer.status == 200 || answer.status == 503)
                    return answer.status == 200
                }
                #expect(pipeline.log(of: "worker").contains("partitions assigned"))
                #expect(try await endpoint.get("/health/live").status == 200)

                let requests = TestRequest.mix(
                    count: 3_000, devices: 60, bundleID: EndToEndTests.bundleID,
                    kinds: [.rewritten, .plainAlert, .silent, .badge, .voip, .badToken, .badPriority, .garbage])
                try await pipeline.produce(requests)
                try await pipeline.outputs.waitFor(requests.count, in: Pipeline.accountingTopics)
                let expected = try await EndToEndTests.decideOffline(requests, configPath: pipeline.configPath)

                // /metrics: counted exactly once everything is finished and committed.
                let p = Self.prefix
                let lag = "\(p)_consumer_lag_records"
                try await eventually("lag 0 and nothing in flight", limit: .seconds(60)) {
                    let text = try await endpoint.scrape()
                    return !text.series(lag).isEmpty && text.sum(lag) == 0 && text["\(p)_in_flight_records"] == 0
                        && text["\(p)_records_consumed_total"] == Double(requests.count)
                }
                let text = try await endpoint.scrape()
                var deliveries: [String: Double] = [:]
                var deadLetters: [String: Double] = [:]
                var launches: [String: Double] = [:]
                for outcome in expected.values {
                    if outcome.disposition == "dead-letter" {
                        deadLetters[#"\#(p)_dead_letters_total{reason="\#(outcome.reason)"}"#, default: 0] += 1
                    } else {
                        deliveries[#"\#(p)_deliveries_total{disposition="\#(outcome.disposition)",reason="\#(outcome.reason)"}"#, default: 0] += 1
                    }
                    if let trigger = outcome.launch { launches[#"\#(p)_launches_total{trigger="\#(trigger)"}"#, default: 0] += 1 }
                }
                #expect(text.series("\(p)_deliveries_total") == deliveries)
                #expect(text.series("\(p)_dead_letters_total") == deadLetters)
                #expect(text.series("\(p)_launches_total") == launches)
                #expect(deadLetters.count >= 2 && deliveries.count >= 2, "the mix covers several reasons")
                let delivered = deliveries.values.reduce(0, +)
                let deadLettered = deadLetters.values.reduce(0, +)
                #expect(text[#"\#(p)_outputs_produced_total{topic="\#(Pipeline.deliveries)"}"#] == delivered)
                #expect(text[#"\#(p)_outputs_produced_total{topic="\#(Pipeline.deadLetter)"}"#] == deadLettered)
                #expect(text[#"\#(p)_outputs_produced_total{topic="\#(Pipeline.launches)"}"#] == launches.values.reduce(0, +))
                // Histograms: one latency observation per request; the rewrite extension observed.
                #expect(text["\(p)_end_to_end_latency_seconds_count"] == Double(requests.count))
                #expect(text["\(p)_end_to_end_latency_seconds_sum"] > 0)
                let extensionCounts = text.series("\(p)_extension_duration_seconds_count")
                #expect(extensionCounts.values.reduce(0, +) >= Double(requests.filter { $0.kind == .rewritten }.count))
                #expect(text["\(p)_commits_total"] >= 1)
                #expect(text["\(p)_commit_failures_total"] == 0)
                #expect(text["\(p)_rebalances_total"] >= 1)
                // The partitions of the requests topic and of the responses topic.
                // Requests, responses, devices and activity-repartition: the group consumes all four.
                #expect(text["\(p)_assigned_partitions"] == Double(4 * pipeline.partitions))
                #expect(text["\(p)_paused_partitions"] == 0)
                #expect(text["\(p)_oldest_in_flight_age_seconds"] == 0)
                #expect(try await endpoint.get("/health/live").status == 200)
                #expect(try await endpoint.get("/health/ready").status == 200)

                // The metrics topic: every snapshot covers one interval; together they saw every request;
                // the latest has the run's totals and no lag.
                try await eventually("a snapshot with every request and no lag", limit: .seconds(60)) {
                    let published = Self.snapshots(snapshots, group: pipeline.group)
                    guard let latest = published.last else { return false }
                    return published.reduce(0) { $0 + $1.latency.count } == requests.count
                        && latest.totals.delivered + latest.totals.deadLettered == requests.count
                        && latest.lag == 0
                        && latest.partitions.filter { $0.topic == Pipeline.requests }.count == Int(pipeline.partitions)
                }
                let published = Self.snapshots(snapshots, group: pipeline.group)
                let latest = try #require(published.last)
                #expect(Set(published.map(\.workerId)).count == 1, "one worker, one stable id")
                #expect(latest.totals.consumed == requests.count)
                #expect(Double(latest.totals.deadLettered) == deadLettered)
                #expect(latest.totals.outputs[Pipeline.deliveries] == Int(delivered))
                #expect(latest.inFlight == 0)
                #expect(published.dropFirst().allSatisfy { $0.intervalSeconds >= 0.5 }, "snapshots come every metrics.interval (500ms), never sooner")
                #expect(published.contains { $0.rates.consumed > 0 })
                #expect(published.contains { $0.latency.p99 != nil })

                // top: the pure rendering of the recorded snapshots, then the command itself.
                let lines = TopView.render([latest], group: pipeline.group, now: Date())
                #expect(lines.contains { $0.hasPrefix("TOTAL (1 workers)") && $0.contains(" \(requests.count)") })
                let top = try await ChildProcess.run(
                    try BuiltBinary.path(),
                    ["top", "--bootstrap", pipeline.bootstrapServers, "--group", pipeline.group,
                     "--iterations", "100", "--refresh", "0.1"],
                    limit: .seconds(60))
                #expect(top.exitedNormally && top.status == 0)
                #expect(top.output.contains(latest.workerId), "top shows the worker: \(top.output.suffix(500))")

                worker.send(signal: SIGTERM)
                let exit = try await worker.waitForExit(limit: .seconds(60))
                let log = pipeline.log(of: "worker")
                #expect(exit.exitedNormally && exit.status == 0, "worker log: \(log.suffix(2_000))")

                // Logs: JSON lines, never a device token.
                let logLines = log.split(separator: "\n")
                let notJSON = logLines.filter { line in
                    let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                    return !(object?["level"] is String && object?["message"] is String)
                }
                #expect(!logLines.isEmpty && notJSON.isEmpty, "not JSON log lines: \(notJSON.prefix(3))")
                let tokens = Set(requests.map(\.token))
                #expect(!tokens.contains { log.contains($0) }, "a device token appears in the log")
            }
        }
    }

    @Test("during graceful shutdown: not ready, still live, metrics still served, until the record in flight is done")
    func shutdown() async throws {
        let webhook = WebhookServer()
        try await webhook.run(delay: .seconds(4)) { baseURL in
            try await Pipeline.with(apps: EndToEndTests.apps(webhookURL: baseURL + "/hook")) { pipeline in
                let worker = try pipeline.startWorker("worker")
                let endpoint = try await Self.endpoint(of: "worker", in: pipeline)
                try await eventually("the worker to be ready", limit: .seconds(60)) {
                    try await endpoint.get("/health/ready").status == 200
                }
                let request = TestRequest.make(.webhook, bundleID: EndToEndTests.bundleID, token: String(repeating: "cd", count: 32), sequence: 1)
                try await pipeline.produce([request])
                try await eventually("the webhook to be called", limit: .seconds(60)) { webhook.calls == 1 }
                #expect(try await endpoint.scrape()["\(Self.prefix)_in_flight_records"] == 1)

                worker.send(signal: SIGTERM)
                // The record waits on the webhook for seconds: meanwhile the worker says it is not ready
                // (no new traffic) but alive, and still serves its metrics.
                try await eventually("readiness to fail once shutdown began", limit: .seconds(30)) {
                    let answer = try await endpoint.get("/health/ready")
                    return answer.status == 503 && answer.body.contains("shutting down")
                }
                #expect(try await endpoint.get("/health/live").status == 200)
                #expect(try await endpoint.scrape()["\(Self.prefix)_records_consumed_total"] == 1)

                let exit = try await worker.waitForExit(limit: .seconds(60))
                #expect(exit.exitedNormally && exit.status == 0, "worker log: \(pipeline.log(of: "worker").suffix(2_000))")
                // The record finished before the worker left: its delivery is out.
                try await pipeline.outputs.waitFor(1, in: [Pipeline.deliveries], limit: .seconds(30))
            }
        }
    }

    @Test("start-up asks the cluster for its topics once: one metadata request checks the output and state topics and shows the producer connected")
    func oneMetadataRequestAtStart() async throws {
        var properties = Pipeline.defaultKafkaProperties
        // librdkafka logs each metadata request it sends, with the reason; `serve` passes its
        // debug lines on at level debug.
        properties["debug"] = "metadata"
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: Pipeline.makeLogger())
        try await Pipeline.with(
            on: .embedded(cluster), partitions: 2, apps: EndToEndTests.apps(webhookURL: "http://127.0.0.1:9/unused"), kafkaProperties: properties
        ) { pipeline in
            let worker = try pipeline.startWorker("worker", environment: ["LOG_LEVEL": "debug"])
            let endpoint = try await Self.endpoint(of: "worker", in: pipeline)
            // Ready: in the group, and its producer connected (the check that used to ask again).
            try await eventually("the worker to be ready", limit: .seconds(60)) { try await endpoint.get("/health/ready").status == 200 }
            let log = pipeline.log(of: "worker")
            #expect(log.contains("worker started"))
            // The asks for every topic: the worker producer's own (the topic readers and the group
            // ask about their topics, and librdkafka about what it needs, for other reasons).
            let asked = log.split(separator: "\n").filter { $0.contains("Request metadata for all topics: application requested") }
            #expect(asked.count == 1, "\(asked.map { $0.prefix(300) })")
            worker.send(signal: SIGTERM)
            let exit = try await worker.waitForExit(limit: .seconds(60))
            #expect(exit.exitedNormally && exit.status == 0, "worker log: \(pipeline.log(of: "worker").suffix(2_000))")
        }
    }

    /// The worker's HTTP endpoint, from the port it logged (it binds port 0).
    static func endpoint(of name: String, in pipeline: Pipeline) async throws -> OperationsEndpoint {
        let port = LockedPort()
        try await eventually("\(name) to log its HTTP port", limit: .seconds(60)) {
            for line in pipeline.log(of: name).split(separator: "\n") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    object["message"] as? String == "http server listening",
                    let metadata = object["metadata"] as? [String: Any],
                    let text = metadata["http.port"] as? String, let value = Int(text), value > 0
                else { continue }
                port.set(value)
                return true
            }
            return false
        }
        return OperationsEndpoint(port: port.value)
    }

    /// The snapshots of `group` read so far, in the order published.
    static func snapshots(_ collector: OutputCollector, group: String) -> [MetricsSnapshot] {
        collector.records(of: Pipeline.metrics).compactMap { record in
            record.value.flatMap { try? MetricsSnapshot(jsonBytes: $0) }
        }.filter { $0.group == group }
    }
}
