package import Foundation

/// The text of `top`: one line per worker of a group and the group's totals, from the latest
/// snapshot of each worker. A pure function of the snapshots, so it is tested without Kafka.
package enum TopView {
    /// Snapshots older than this many intervals mark their worker as stale.
    package static let staleAfterIntervals = 3.0

    /// The lines for `snapshots` (the latest per worker) at `now`, only those of `group` when given.
    package static func render(_ snapshots: [MetricsSnapshot], group: String?, now: Date) -> [String] {
        let shown = snapshots.filter { group == nil || $0.group == group }.sorted { $0.workerId < $1.workerId }
        let groups = Set(shown.map(\.group)).sorted()
        var lines = ["notification-dispatcher top — \(groups.isEmpty ? "no workers yet" : "group " + groups.joined(separator: ", "))"]
        lines.append(
            row("WORKER", "PARTS", "IN/S", "OUT/S", "LAG", "IN FLIGHT", "HELD", "P99", "CONSUMED", "AGE")
        )
        for snapshot in shown {
            let age = now.timeIntervalSince(snapshot.timestamp)
            let stale = age > staleAfterIntervals * max(snapshot.intervalSeconds, 1)
            lines.append(
                row(
                    snapshot.workerId + (stale ? " (stale)" : ""),
                    "\(snapshot.partitions.count)",
                    rate(snapshot.rates.consumed),
                    rate(outputRate(snapshot)),
                    "\(snapshot.lag)",
                    "\(snapshot.inFlight)",
                    "\(snapshot.heldPartitions)",
                    seconds(snapshot.latency.p99),
                    "\(snapshot.totals.consumed)",
                    String(format: "%.0fs", max(0, age))
                )
            )
        }
        let totals = groupTotals(shown)
        lines.append(
            row(
                "TOTAL (\(shown.count) workers)", "\(totals.partitions)", rate(totals.consumedRate),
                rate(totals.outputRate), "\(totals.lag)", "\(totals.inFlight)", "\(totals.held)",
                seconds(totals.p99), "\(totals.consumed)", ""
            )
        )
        let dispositions = totals.deliveries.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        lines.append("dispositions: " + (dispositions + ["dead-letter \(totals.deadLetters)"]).joined(separator: " | "))
        let actions = totals.actions.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        lines.append("actions (handledBy/reason): " + (actions.isEmpty ? "none" : actions.joined(separator: " | ")))
        return lines
    }

    /// The group's totals over its workers' latest snapshots.
    package struct Totals: Sendable, Equatable {
        /// Assigned partitions over all workers.
        package var partitions = 0
        /// Records consumed per second.
        package var consumedRate = 0.0
        /// Deliveries, actions and dead letters per second.
        package var outputRate = 0.0
        /// Consumer lag summed.
        package var lag: Int64 = 0
        /// Records in flight.
        package var inFlight = 0
        /// Partitions whose intake flow control holds.
        package var held = 0
        /// The highest p99 latency among the workers (a bound for the group's p99), in seconds.
        package var p99: Double?
        /// Records consumed since the workers started.
        package var consumed = 0
        /// Deliveries by disposition.
        package var deliveries: [String: Int] = [:]
        /// Dead letters.
        package var deadLetters = 0
        /// Responses handled, by `handledBy/reason`.
        package var actions: [String: Int] = [:]
    }

    /// Sums the snapshots.
    package static func groupTotals(_ snapshots: [MetricsSnapshot]) -> Totals {
        var totals = Totals()
        for snapshot in snapshots {
            totals.partitions += snapshot.partitions.count
            totals.consumedRate += snapshot.rates.consumed
            totals.outputRate += outputRate(snapshot)
            totals.lag += snapshot.lag
            totals.inFlight += snapshot.inFlight
            totals.held += snapshot.heldPartitions
            if let p99 = snapshot.latency.p99 { totals.p99 = max(totals.p99 ?? 0, p99) }
            totals.consumed += snapshot.totals.consumed
            totals.deliveries.merge(snapshot.totals.deliveries, uniquingKeysWith: +)
            totals.deadLetters += snapshot.totals.deadLettered
            totals.actions.merge(snapshot.totals.actions, uniquingKeysWith: +)
        }
        return totals
    }

    /// A record's decided outputs per second: deliveries, actions and dead letters.
    private static func outputRate(_ snapshot: MetricsSnapshot) -> Double {
        snapshot.rates.delivered + snapshot.rates.handled + snapshot.rates.deadLettered
    }

    private static func row(_ columns: String...) -> String {
        let widths = [28, 6, 9, 9, 9, 10, 7, 9, 11, 5]
        return zip(columns, widths).map { column, width in
            column.count >= width ? column + " " : column + String(repeating: " ", count: width - column.count)
        }.joined().trimmingCharacters(in: .whitespaces)
    }

    private static func rate(_ value: Double) -> String { String(format: "%.1f", value) }

    private static func seconds(_ value: Double?) -> String {
        guard let value else { return "-" }
        return value < 1 ? String(format: "%.1fms", value * 1_000) : String(format: "%.2fs", value)
    }
}
