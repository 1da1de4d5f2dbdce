import Dispatcher
import Foundation
import Kafka
import Notifications
import Testing
import TestSupport

@testable import DispatcherService
import Records
import ServiceExtensions

@Suite("Worker metrics with an injected Prometheus registry")
struct WorkerMetricsTests {
    @Test("counters follow the worker's counters exactly, however often they are copied in")
    func counters() {
        let export = PrometheusExport()
        let metrics = WorkerMetrics(names: MetricNames(prefix: "t"), factory: export.factory)
        var statistics = WorkerStatistics()
        statistics.consumed = 10
        statistics.commits = 2
        statistics.rebalances = 1
        statistics.inFlight = 4
        statistics.isHolding = true
        statistics.assignedPartitions = 3
        metrics.update(from: statistics)
        metrics.update(from: statistics)
        let holding = PrometheusText(export.render())
        #expect(holding["t_held_partitions"] == 3, "every assigned partition while the intake is held")
        #expect(holding["t_paused_partitions"] == 3, "the earlier name, exported beside it")
        statistics.consumed = 25
        statistics.commitFailures = 1
        statistics.inFlight = 0
        statistics.isHolding = false
        metrics.update(from: statistics)
        let text = PrometheusText(export.render())
        #expect(text["t_records_consumed_total"] == 25)
        #expect(text["t_commits_total"] == 2)
        #expect(text["t_commit_failures_total"] == 1)
        #expect(text["t_rebalances_total"] == 1)
        #expect(text["t_in_flight_records"] == 0)
        #expect(text["t_held_partitions"] == 0)
        #expect(text["t_paused_partitions"] == 0)
        #expect(text["t_assigned_partitions"] == 3)
    }

    @Test("an older reading copied in after a newer one adds nothing, and later growth counts once")
    func outOfOrderReadings() {
        var tally = MetricsTally()
        func series(_ value: Int) -> [CounterSeries] { [CounterSeries(name: "consumed", value: value)] }
        #expect(tally.growth(to: series(12)).map(\.growth) == [12])
        #expect(tally.growth(to: series(10)).isEmpty)
        #expect(tally.growth(to: series(15)).map(\.growth) == [3])
    }

    @Test("one lag gauge per partition reported; a partition no longer reported loses its gauge")
    func lag() {
        let export = PrometheusExport()
        let metrics = WorkerMetrics(names: MetricNames(), factory: export.factory)
        let p0 = TopicPartition(topic: "r", partition: 0)
        let p1 = TopicPartition(topic: "r", partition: 1)
        metrics.received(ConsumerStatistics(consumerLag: [p0: 5, p1: 7], raw: "{}"))
        var text = PrometheusText(export.render())
        #expect(text[#"notification_dispatcher_consumer_lag_records{topic="r",partition="0"}"#] == 5)
        #expect(text[#"notification_dispatcher_consumer_lag_records{topic="r",partition="1"}"#] == 7)
        metrics.received(ConsumerStatistics(consumerLag: [p0: 0], raw: "{}"))
        text = PrometheusText(export.render())
        #expect(text.series("notification_dispatcher_consumer_lag_records") == [#"notification_dispatcher_consumer_lag_records{topic="r",partition="0"}"#: 0])
    }

    @Test("snapshots: totals from the worker's counters, rates over the interval, percentiles per interval")
    func snapshots() {
        var tally = MetricsTally()
        let start = ContinuousClock.now
        var statistics = WorkerStatistics()
        let first = tally.snapshot(statistics: statistics, workerId: "w", group: "g", date: .now, at: start)
        #expect(first.rates.consumed == 0)
        tally.intervalLatency.record(.milliseconds(20))
        statistics.consumed = 100
        let second = tally.snapshot(statistics: statistics, workerId: "w", group: "g", date: .now, at: start + .seconds(4))
        #expect(second.totals.consumed == 100)
        #expect(second.rates.consumed == 25)
        #expect(second.intervalSeconds == 4)
        #expect(second.latency.count == 1)
        #expect(abs((second.latency.p99 ?? 0) - 0.020) < 1e-9)
        let third = tally.snapshot(statistics: statistics, workerId: "w", group: "g", date: .now, at: start + .seconds(8))
        #expect(third.latency.count == 0, "percentiles cover one interval")
        #expect(third.rates.consumed == 0)
    }

    @Test("the partitioned state's totals grow into counters as the tally's do; its sizes are gauges")
    func stateCounters() {
        let export = PrometheusExport()
        let metrics = WorkerMetrics(names: MetricNames(prefix: "t"), factory: export.factory)
        var statistics = WorkerStatistics()
        var state = StateGauges()
        state.stored.entries = 2
        state.stored.limit = 2
        state.stored.refused = 1
        state.activities.evicted = 3
        state.recordsIgnored = ["notifications.devices": 4]
        state.misplacedRecords = ["activities": 6]
        state.requestsPartitioner = .init(found: "consistent_random", configured: "murmur2_random")
        state.badges.entries = 7
        state.badges.limit = 9
        state.badges.refused = 2
        statistics.state = state
        metrics.update(from: statistics)
        metrics.update(from: statistics)
        state.stored.refused = 5
        state.misplacedRecords = ["activities": 12, "devices": 1]
        statistics.state = state
        metrics.update(from: statistics)
        let text = PrometheusText(export.render())
        #expect(text[#"t_state_refusals_total{table="stored"}"#] == 5, "grown to the total, each growth counted once")
        #expect(text[#"t_state_evictions_total{table="activities"}"#] == 3)
        #expect(text[#"t_state_records_ignored_total{topic="notifications.devices"}"#] == 4)
        #expect(text[#"t_state_entries{table="stored"}"#] == 2)
        #expect(text[#"t_state_limit{table="stored"}"#] == 2)
        #expect(text[#"t_state_misplaced_records_total{table="activities"}"#] == 12)
        #expect(text[#"t_state_misplaced_records_total{table="devices"}"#] == 1)
        #expect(text[#"t_state_partitioner_mismatch{found="consistent_random",configured="murmur2_random"}"#] == 1)
        // The badge ledger's table (SEMANTICS 21), as the others.
        #expect(text[#"t_state_entries{table="badges"}"#] == 7)
        #expect(text[#"t_state_limit{table="badges"}"#] == 9)
        #expect(text[#"t_state_refusals_total{table="badges"}"#] == 2)
    }

    @Test("a snapshot's state from a worker without a badge ledger decodes with an empty badges table")
    func stateWithoutBadgesDecodes() throws {
        var state = StateGauges()
        state.stored.entries = 1
        let encoded = try JSONEncoder().encode(state)
        var object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        object["badges"] = nil
        let decoded = try JSONDecoder().decode(StateGauges.self, from: try JSONSerialization.data(withJSONObject: object))
        #expect(decoded == state)
    }

    @Test("a snapshot's state from a worker of an earlier version, without misplaced records or a requests partitioner, still decodes")
    func earlierStateDecodes() throws {
        var state = StateGauges()
        state.devices = 3
        let encoded = try JSONEncoder().encode(state)
        var object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        object["misplacedRecords"] = nil
        let decoded = try JSONDecoder().decode(StateGauges.self, from: try JSONSerialization.data(withJSONObject: object))
        #expect(decoded == state)
    }

    @Test("the worker's lag, kept once in its tally, is what dev's summary sums and the snapshots list by partition")
    func lagKeptOnce() {
        var core = WorkerCore(flow: FlowControl(maxRecords: 10, maxBytes: 1_000, resumeRatio: 0.5), ordering: .key)
        core.received(lag: [TopicPartition(topic: "r", partition: 1): 7, TopicPartition(topic: "r", partition: 0): 5])
        let statistics = core.statistics(at: .now)
        #expect(statistics.lag == 12)
        var tally = MetricsTally()
        let snapshot = tally.snapshot(statistics: statistics, workerId: "w", group: "g", date: .now, at: .now)
        #expect(snapshot.partitions.map(\.partition) == [0, 1])
        #expect(snapshot.partitions.map(\.lag) == [5, 7])
        #expect(snapshot.lag == 12)
    }

    @Test("responses count once, by handledBy and reason, their launches by trigger: Prometheus, snapshots and the worker's counters read that count")
    func actions() throws {
        let dispatcher = try Dispatcher(
            configuration: Configuration(
                yaml: """
                    apps:
                      com.example.chat:
                        categories: {PLAIN: {actions: [{id: ACK, title: OK}]}}
                    """),
            registry: ExtensionRegistry())
        func respond(_ action: String, state: String) -> DispatchResult {
            let value = #"{"notification":{"apnsId":"6f1c2a3e-0000-4000-8000-00000000000a","payload":{"aps":{"alert":"Hi","category":"PLAIN"}}},"actionIdentifier":"\#(action)"}"#
            let record = TestRecord(
                headers: [("apns-topic", "com.example.chat"), ("app-state", state)], value: Array(value.utf8),
                topic: TestRecord.responsesTopic
            ).requestRecord
            return dispatcher.respond(record, appStates: NoAppStates(), receivedAt: Date())
        }
        let results = [
            respond("ACK", state: "notRunning"), respond("ACK", state: "foreground"),
            respond("com.apple.UNNotificationDismissActionIdentifier", state: "foreground"), respond("NOPE", state: "foreground"),
        ]
        let export = PrometheusExport()
        let metrics = WorkerMetrics(names: MetricNames(prefix: "t"), factory: export.factory)
        var statistics = WorkerStatistics()
        for result in results { statistics.tally.count(result) }
        metrics.update(from: statistics)
        let text = PrometheusText(export.render())
        #expect(text[#"t_actions_total{handled_by="app",reason="delivered-to-app"}"#] == 2)
        #expect(text[#"t_actions_total{handled_by="none",reason="dismiss-not-reported"}"#] == 1)
        #expect(text[#"t_launches_total{trigger="userSelectsBackgroundAction"}"#] == 1)
        #expect(text[#"t_dead_letters_total{reason="UnknownAction"}"#] == 1)
        #expect(text[#"t_outputs_produced_total{topic="notifications.actions"}"#] == 3)
        #expect(statistics.actions == ["app": 2, "none": 1])
        #expect(statistics.launches == 1)
        #expect(statistics.accountedFor == 4)
        let snapshot = metrics.snapshot(statistics: statistics, workerId: "w", group: "g")
        #expect(snapshot.totals.actions == ["app/delivered-to-app": 2, "none/dismiss-not-reported": 1])
        #expect(snapshot.totals.launches == ["userSelectsBackgroundAction": 1])
    }

    @Test("the reasons of sections 20 and 22 are counted like every delivery reason: not-authorized, alerts-off, extension-memory-limit")
    func settingsAndMemoryReasons() async throws {
        let yaml = """
            dispatch: {extensionMemoryLimit: 64}
            apps:
              com.example.app:
                serviceExtension: {kind: rewrite, set: {aps.thread-id: t}}
            """
        var registry = ExtensionRegistry()
        BuiltInExtensions.registerRewrite(in: &registry)
        let dispatcher = try Dispatcher(configuration: try Configuration(yaml: yaml), registry: registry)
        let devices = DevicesTable()
        let token = { (byte: String) in String(repeating: byte, count: 32) }
        devices.apply(key: RecordBytes(token("a1")), value: RecordBytes(#"{"authorization":"denied"}"#))
        devices.apply(key: RecordBytes(token("a2")), value: RecordBytes(#"{"alerts":false}"#))
        func dispatch(_ key: String, _ payload: String) async -> DispatchResult {
            let record = TestRecord(token: key, value: Array(payload.utf8)).requestRecord
            return await dispatcher.decide(record, tables: StateTables(devices: devices), now: Date())
        }
        let mutable = #"{"aps":{"alert":{"title":"A title that is long enough","body":"and a body"},"mutable-content":1}}"#
        let results = [
            await dispatch(token("a1"), mutable), await dispatch(token("a1"), mutable), await dispatch(token("a2"), mutable),
            await dispatch(token("a3"), mutable),
        ]
        let export = PrometheusExport()
        let metrics = WorkerMetrics(names: MetricNames(prefix: "t"), factory: export.factory)
        var statistics = WorkerStatistics()
        for result in results { statistics.tally.count(result) }
        metrics.update(from: statistics)
        let text = PrometheusText(export.render())
        #expect(text[#"t_deliveries_total{disposition="original",reason="not-authorized"}"#] == 2)
        #expect(text[#"t_deliveries_total{disposition="original",reason="alerts-off"}"#] == 1)
        #expect(text[#"t_deliveries_total{disposition="original",reason="extension-memory-limit"}"#] == 1)
        let snapshot = metrics.snapshot(statistics: statistics, workerId: "w", group: "g")
        #expect(snapshot.totals.deliveryReasons["original/extension-memory-limit"] == 1)
        #expect(snapshot.totals.deliveryReasons["original/not-authorized"] == 2)
    }

    @Test("the badge ledger's dead letters and badges records are counted: BadBadgeIncrement by reason, badges by topic")
    func badgeLedgerCounts() async throws {
        let yaml = """
            apps:
              com.example.app: {badgeLedger: true}
              com.example.other: {}
            """
        let dispatcher = try Dispatcher(configuration: try Configuration(yaml: yaml), registry: ExtensionRegistry())
        var tables = StateTables()
        tables.badges = BadgesTable()
        func dispatch(_ topic: String, _ increment: String) async -> DispatchResult {
            let record = TestRecord(
                token: String(repeating: "b1", count: 32), headers: [("apns-topic", topic), ("badge-increment", increment)],
                value: Array(#"{"aps":{"alert":"Mail"}}"#.utf8)
            ).requestRecord
            return await dispatcher.decide(record, tables: tables, now: Date())
        }
        let results = [
            await dispatch("com.example.app", "1"), await dispatch("com.example.app", "zero"), await dispatch("com.example.other", "1"),
        ]
        var statistics = WorkerStatistics()
        for result in results { statistics.tally.count(result) }
        #expect(results[0].outputs.map(\.topic).contains("notifications.badges"))
        let export = PrometheusExport()
        let metrics = WorkerMetrics(names: MetricNames(prefix: "t"), factory: export.factory)
        metrics.update(from: statistics)
        let text = PrometheusText(export.render())
        #expect(text[#"t_dead_letters_total{reason="BadBadgeIncrement"}"#] == 2)
        #expect(text[#"t_deliveries_total{disposition="original",reason="not-mutable"}"#] == 1)
    }
}
