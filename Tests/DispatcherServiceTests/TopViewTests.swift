import DispatcherService
import Foundation
import Testing

@Suite("top: rendering recorded snapshots")
struct TopViewTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func snapshot(_ worker: String, group: String = "g", age: Double = 1, consumed: Int, lags: [Int64], p99: Double?) -> MetricsSnapshot {
        var snapshot = MetricsSnapshot(workerId: worker, group: group, timestamp: now.addingTimeInterval(-age), intervalSeconds: 5)
        snapshot.partitions = lags.enumerated().map { .init(topic: "notifications.requests", partition: Int32($0.offset), lag: $0.element) }
        snapshot.totals.consumed = consumed
        snapshot.totals.deliveries = ["modified": consumed / 2, "original": consumed - consumed / 2 - 1]
        snapshot.totals.deadLetters = ["BadDeviceToken": 1]
        snapshot.rates.consumed = Double(consumed) / 100
        snapshot.rates.delivered = Double(consumed) / 100 - 1
        snapshot.rates.deadLettered = 1
        snapshot.totals.actions = ["app/delivered-to-app": consumed / 10, "contentExtension/media-control": 1]
        snapshot.rates.handled = 0.5
        snapshot.latency.p99 = p99
        snapshot.inFlight = 3
        return snapshot
    }

    @Test("one line per worker of the group, sorted, then the group's totals and dispositions")
    func rendering() {
        let snapshots = [
            Self.snapshot("worker-b", consumed: 2_000, lags: [5, 0, 7], p99: 0.250),
            Self.snapshot("worker-a", consumed: 1_000, lags: [1, 2], p99: 0.012),
            Self.snapshot("other", group: "other-group", consumed: 9, lags: [100], p99: 9),
            Self.snapshot("worker-c", age: 60, consumed: 10, lags: [], p99: nil),
        ]
        let lines = TopView.render(snapshots, group: "g", now: Self.now)
        #expect(lines.count == 8)
        #expect(lines[0] == "notification-dispatcher top — group g")
        #expect(lines[1].hasPrefix("WORKER"))
        #expect(lines[2].hasPrefix("worker-a "))
        #expect(lines[2].split(separator: " ").map(String.init) == ["worker-a", "2", "10.0", "10.5", "3", "3", "0", "12.0ms", "1000", "1s"])
        #expect(lines[3].split(separator: " ").map(String.init) == ["worker-b", "3", "20.0", "20.5", "12", "3", "0", "250.0ms", "2000", "1s"])
        #expect(lines[4].hasPrefix("worker-c (stale)"), "a snapshot 60 s old with a 5 s interval is stale")
        #expect(
            lines[5].split(separator: " ").map(String.init)
                == ["TOTAL", "(3", "workers)", "5", "30.1", "31.6", "15", "9", "0", "250.0ms", "3010"]
        )
        #expect(lines[6] == "dispositions: modified 1505 | original 1502 | dead-letter 3")
        #expect(lines[7] == "actions (handledBy/reason): app/delivered-to-app 301 | contentExtension/media-control 3")
        #expect(!lines.joined().contains("other"), "workers of other groups are left out")
    }

    @Test("every group when none is chosen; a friendly line before any snapshot")
    func groups() {
        let all = TopView.render([Self.snapshot("a", consumed: 1, lags: [], p99: nil), Self.snapshot("b", group: "h", consumed: 1, lags: [], p99: nil)], group: nil, now: Self.now)
        #expect(all[0] == "notification-dispatcher top — group g, h")
        let none = TopView.render([], group: "g", now: Self.now)
        #expect(none[0] == "notification-dispatcher top — no workers yet")
        #expect(none[2].hasPrefix("TOTAL (0 workers)"))
        #expect(none.last == "actions (handledBy/reason): none")
    }

    @Test("snapshots survive the JSON of the metrics topic")
    func roundTrip() throws {
        let snapshot = Self.snapshot("worker-a", consumed: 1_000, lags: [1, 2], p99: 0.012)
        #expect(try MetricsSnapshot(jsonBytes: snapshot.jsonBytes()) == snapshot)
    }

    @Test("a snapshot of a worker of an earlier version (held partitions named pausedPartitions) decodes with them")
    func snapshotWithTheOldNameOfHeldPartitions() throws {
        var snapshot = Self.snapshot("worker-a", consumed: 10, lags: [1], p99: nil)
        snapshot.heldPartitions = 4
        var json = try #require(try JSONSerialization.jsonObject(with: Data(snapshot.jsonBytes())) as? [String: Any])
        let held = json.removeValue(forKey: "heldPartitions")
        #expect(held as? Int == 4)
        json["pausedPartitions"] = held
        let older = try JSONSerialization.data(withJSONObject: json)
        #expect(try MetricsSnapshot(jsonBytes: Array(older)) == snapshot)
    }

    @Test("a snapshot of a worker without actions (an older version) still decodes, with none")
    func olderSnapshot() throws {
        var snapshot = Self.snapshot("worker-a", consumed: 10, lags: [1], p99: nil)
        snapshot.totals.actions = [:]
        snapshot.rates.handled = 0
        var json = try #require(try JSONSerialization.jsonObject(with: Data(snapshot.jsonBytes())) as? [String: Any])
        var totals = try #require(json["totals"] as? [String: Any])
        var rates = try #require(json["rates"] as? [String: Any])
        #expect(totals.removeValue(forKey: "actions") != nil)
        #expect(rates.removeValue(forKey: "handled") != nil)
        json["totals"] = totals
        json["rates"] = rates
        let older = try JSONSerialization.data(withJSONObject: json)
        #expect(try MetricsSnapshot(jsonBytes: Array(older)) == snapshot)
    }
}
