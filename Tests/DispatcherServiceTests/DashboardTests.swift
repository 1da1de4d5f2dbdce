import Dispatcher
import Foundation
import Kafka
import Logging
import Notifications
import ServiceExtensions
import Testing
import TestSupport

@testable import DispatcherService

/// The Grafana dashboard and the alerting rules in deploy/ query only what a worker really exports:
/// a worker runs on the embedded broker with every kind of outcome (extensions, launches, dead
/// letters, a refused output), and every metric and label the queries name must be in its scrape.
@Suite("deploy/ dashboards and alerts against the exported metrics", .serialized)
struct DashboardTests {
    static let prefix = "notification_dispatcher"

    @Test("every metric and label the dashboard and the alerts query is exported by a running worker")
    func queriesMatchExportedMetrics() async throws {
        let exposition = try await Self.scrapeOfRealRun()
        let exported = Self.families(in: exposition)
        #expect(exposition.contains(#"reason="OutputRejected""#), "the run had a refused output")
        let root = BuiltBinary.packageRoot()
        let dashboard = try JSONSerialization.jsonObject(
            with: Data(contentsOf: root.appendingPathComponent("deploy/grafana/notification-dispatcher.json")))
        let dashboardQueries = Self.expressions(inJSON: dashboard)
        let alertQueries = try String(contentsOf: root.appendingPathComponent("deploy/prometheus/alerts.yaml"), encoding: .utf8)
            .split(separator: "\n").compactMap { line -> String? in
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                return trimmed.hasPrefix("expr:") ? String(trimmed.dropFirst(5)) : nil
            }
        #expect(dashboardQueries.count >= 10)
        #expect(alertQueries.count >= 10)
        var queried = Set<String>()
        for query in dashboardQueries + alertQueries {
            for (metric, labels) in Self.references(in: query) {
                queried.insert(metric)
                guard let exportedLabels = exported[metric] else {
                    Issue.record("\(metric) (in \(query)) is not exported")
                    continue
                }
                #expect(labels.isSubset(of: exportedLabels), "\(metric) has no label \(labels.subtracting(exportedLabels)) (in \(query))")
            }
        }
        // The failure metrics this issue added are on the dashboard, not only in the scrape.
        for name in ["produce_failures_total", "stalled_partitions", "overdue_records", "offset_rewinds_total", "dead_letters_total"] {
            #expect(queried.contains("\(Self.prefix)_\(name)"), "\(name) is queried")
        }
    }

    /// Runs a worker in this process with the same metrics as `serve` through: a rewrite
    /// extension, launches, a dead letter, and one refused produce; returns its Prometheus text.
    static func scrapeOfRealRun() async throws -> String {
        var logger = Logger(label: "dashboard-test")
        logger.logLevel = .critical
        let cluster = try EmbeddedKafkaCluster(brokers: 1, logger: logger)
        defer { cluster.shutdown() }
        try cluster.createTopics(TopicSettings.product.specifications(partitions: 2))
        let configuration = try Configuration(
            yaml: """
                kafka:
                  bootstrapServers: "\(cluster.bootstrapServers)"
                  groupId: dashboard-\(UUID().uuidString.prefix(8))
                  properties: {session.timeout.ms: "6000", heartbeat.interval.ms: "500", fetch.wait.max.ms: "10"}
                dispatch: {commitInterval: 100ms}
                apps:
                \(EndToEndTests.apps(webhookURL: "http://127.0.0.1:9/unused"))
                """)
        let requests = TestRequest.mix(
            count: 200, devices: 20, bundleID: EndToEndTests.bundleID, kinds: [.rewritten, .plainAlert, .badToken])
        let refused = TestRequest.make(.plainAlert, bundleID: EndToEndTests.bundleID, token: String(repeating: "ab", count: 32), sequence: 0)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: logger)
        _ = try await producer.send(refused.record.producerRecord(topic: Pipeline.requests))
        // The worker's first produce (the one delivery of the request above) is refused for good:
        // its request becomes an OutputRejected dead letter. The rest is produced afterwards.
        try cluster.pushRequestErrors(apiKey: 0, [29])

        let export = PrometheusExport()
        let metrics = WorkerMetrics(names: MetricNames(prefix: prefix), factory: export.factory)
        var settings = WorkerSettings(configuration: configuration)
        settings.consumer.statisticsInterval = .seconds(1)
        return try await BuiltInExtensions.withRegistry { registry in
            let dispatcher = try Dispatcher(configuration: configuration, registry: registry)
            let worker = try DispatchWorker(settings: settings, dispatcher: dispatcher, logger: logger, metrics: metrics)
            return try await withThrowingTaskGroup(of: String?.self) { group in
                group.addTask {
                    try await worker.run()
                    return nil
                }
                // A backstop, not a bound: beside two CPU hogs and the real-broker phase, 60 s ran out.
                try await eventually("the refused request accounted for", limit: .seconds(300)) {
                    worker.statistics.accountedFor == 1
                }
                do {
                    for request in requests { _ = try await producer.send(request.record.producerRecord(topic: Pipeline.requests)) }
                } catch {
                    await producer.shutdown()
                    throw error
                }
                await producer.shutdown()
                try await eventually("every request accounted for and the lag reported", limit: .seconds(60)) {
                    metrics.update(from: worker.statistics)
                    return worker.statistics.accountedFor == requests.count + 1
                        && export.render().contains("\(prefix)_consumer_lag_records{")
                }
                metrics.update(from: worker.statistics)
                let text = export.render()
                group.cancelAll()
                return text
            }
        }
    }

    /// Metric names exported (samples, with `_bucket`/`_sum`/`_count` series as their own names)
    /// and the label names each carries.
    static func families(in exposition: String) -> [String: Set<String>] {
        var families: [String: Set<String>] = [:]
        for line in exposition.split(separator: "\n") where !line.hasPrefix("#") {
            let series = line.prefix { $0 != " " }
            let name = String(series.prefix { $0 != "{" })
            var labels = families[name] ?? []
            if let open = series.firstIndex(of: "{") {
                for pair in series[series.index(after: open)...].dropLast().split(separator: ",") {
                    labels.insert(String(pair.prefix { $0 != "=" }))
                }
            }
            families[name] = labels
        }
        return families
    }

    /// Every `expr` string in a Grafana dashboard's JSON.
    static func expressions(inJSON value: Any) -> [String] {
        if let object = value as? [String: Any] {
            return object.flatMap { key, value in
                key == "expr" ? [value as? String].compactMap { $0 } : expressions(inJSON: value)
            }
        }
        if let array = value as? [Any] { return array.flatMap(expressions(inJSON:)) }
        return []
    }

    /// The metrics a PromQL expression reads, each with the label names its selector and its
    /// `by (...)` clauses name (`le` for histogram buckets included).
    static func references(in query: String) -> [(String, Set<String>)] {
        let grouping = Set(
            query.matches(of: /by \(([a-z_, ]+)\)/).flatMap { $0.1.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } })
        return query.matches(of: /(notification_dispatcher_[a-z0-9_]+)(\{[^}]*\})?/).map { match in
            var labels = Set(match.2.map { selector in
                selector.dropFirst().dropLast().split(separator: ",").map { String($0.prefix { $0 != "=" && $0 != "!" }) }
            } ?? [])
            // A `by` clause applies to every metric of the expression; only `le` needs a bucket.
            labels.formUnion(grouping.filter { $0 != "le" || match.1.hasSuffix("_bucket") })
            return (String(match.1), labels)
        }
    }
}
