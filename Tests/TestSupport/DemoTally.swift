public import Foundation
import JSON

/// What `dispatch` makes, offline, of the records `dev` feeds: the counts `dev`'s summary line
/// shows, to hold a `dev` run against.
///
/// A broadcast makes one delivery per subscribed Live Activity (SEMANTICS section 15). In `dev` a
/// worker reads the channel subscriptions from the activities topic as it goes (docs/worker.md,
/// "Partitioned state"), so a broadcast may miss an activity started just before it: those
/// deliveries, the fan-out, may be fewer in `dev` than here. Every other count must match.
public struct DemoTally: Sendable {
    /// The outputs by the summary's names: `modified`, `original`, `discarded` (deliveries by
    /// disposition), `actions` and `actions app`, `actions contentExtension`, `actions none` (action
    /// records by who handled them), `dead letters`, `launches` and `feedback`.
    public private(set) var counts: [String: Int] = [:]
    /// Of the deliveries, a broadcast's (they carry a `channelId`), by disposition.
    public private(set) var fanOut: [String: Int] = [:]
    /// The requests and responses tallied (the state records fed before them not counted).
    public let fed: Int

    /// The names the summary line shows, in its order.
    public static let summaryNames = [
        "modified", "original", "discarded", "actions", "actions app", "actions contentExtension", "actions none",
        "dead letters", "launches",
    ]

    /// The counts of `dev`'s last line ("done: fed F | in I | modified M | original O | discarded D
    /// | actions N (app A, extension E, none X) | dead letters L | launches C | in flight ..."): by
    /// ``summaryNames``, and `fed` and `in`; nil when the line does not read so.
    public static func summaryCounts(_ done: some StringProtocol) -> [String: Int]? {
        let pattern =
            /fed (\d+) \| in (\d+) \| modified (\d+) \| original (\d+) \| discarded (\d+) \| actions (\d+) \(app (\d+), extension (\d+), none (\d+)\) \| dead letters (\d+) \| launches (\d+)/
        guard let match = String(done).firstMatch(of: pattern) else { return nil }
        let output = match.output
        return [
            "fed": Int(output.1)!, "in": Int(output.2)!, "modified": Int(output.3)!, "original": Int(output.4)!,
            "discarded": Int(output.5)!, "actions": Int(output.6)!, "actions app": Int(output.7)!,
            "actions contentExtension": Int(output.8)!, "actions none": Int(output.9)!, "dead letters": Int(output.10)!,
            "launches": Int(output.11)!,
        ]
    }

    /// The lines of Config/samples (requests, responses and state records), in the order `dev`
    /// reads them: files by name, blank lines (spaces, tabs, carriage returns) left out as `dev` skips them.
    public static func sampleLines(root: URL = BuiltBinary.packageRoot()) throws -> [String] {
        let folder = root.appendingPathComponent("Config/samples")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".jsonl") }.sorted()
            .flatMap { name in
                try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8).split(separator: "\n")
                    .map(String.init).filter { !$0.utf8.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D } }
            }
    }

    /// Whether `line` is a record of a state table (devices, channels), which `dev` feeds first and does not count.
    public static func isState(_ line: String) -> Bool {
        line.contains(#""topic":"notifications.devices""#) || line.contains(#""topic":"notifications.channels""#)
    }

    /// Whether `line` is a record of a state table that `dev` feeds in its place among the
    /// requests, as part of the samples' story, without counting it (badges: a reset between pushes).
    public static func isInOrderState(_ line: String) -> Bool {
        line.contains(#""topic":"notifications.badges""#)
    }

    /// Runs the built binary's `dispatch` (with Config/dispatcher.yaml) on every state record of
    /// `samples`, then the first `count` other lines (with the in-order state records among them,
    /// not counted), as `dev --count count` feeds them, and tallies its outputs.
    public static func offline(samples: [String], count: Int, root: URL = BuiltBinary.packageRoot()) async throws -> DemoTally {
        var fed: [String] = []
        var counted = 0
        for line in samples where !isState(line) {
            let counts = !isInOrderState(line)
            if counts, counted == count { break }
            fed.append(line)
            if counts { counted += 1 }
        }
        let config = root.appendingPathComponent("Config/dispatcher.yaml").path
        let run = try await BuiltBinary.run(
            ["dispatch", "--config", config], input: (samples.filter(isState) + fed).joined(separator: "\n"))
        guard run.status == 0 else { throw DispatchFailed(status: run.status, standardError: run.standardError) }
        var tally = DemoTally(fed: counted)
        for line in run.standardOutput.split(separator: "\n") {
            let record = try JSONValue(parsing: Array(line.utf8))
            switch record[path: ["topic"]]?.stringValue {
            case "notifications.dead-letter": tally.counts["dead letters", default: 0] += 1
            case "notifications.feedback": tally.counts["feedback", default: 0] += 1
            case "notifications.launches": tally.counts["launches", default: 0] += 1
            case "notifications.badges", "notifications.stored", "notifications.activities": continue
            case "notifications.actions":
                tally.counts["actions", default: 0] += 1
                tally.counts["actions " + (record[path: ["value", "handledBy"]]?.stringValue ?? "?"), default: 0] += 1
            default:
                let disposition = record[path: ["value", "disposition"]]?.stringValue ?? "?"
                tally.counts[disposition, default: 0] += 1
                if line.contains(#""channelId":""#) { tally.fanOut[disposition, default: 0] += 1 }
            }
        }
        return tally
    }

    /// The range `dev` may show for each of ``summaryNames``: exact, less any broadcast fan-out.
    public var ranges: [String: ClosedRange<Int>] {
        Dictionary(uniqueKeysWithValues: Self.summaryNames.map { name in
            let count = counts[name, default: 0]
            return (name, (count - fanOut[name, default: 0])...count)
        })
    }

    /// Deliveries, action records and dead letters: the decisions, one per record but for a broadcast's fan-out.
    public var decisions: Int {
        ["modified", "original", "discarded", "actions", "dead letters"].reduce(0) { $0 + counts[$1, default: 0] }
    }

    /// All of a broadcast's deliveries.
    public var fanOutTotal: Int { fanOut.values.reduce(0, +) }

    /// How many more decisions than records fed: a broadcast has one delivery per subscribed
    /// activity, none without subscribers.
    public var surplus: Int { decisions - fed }

    /// `dispatch` exited with a failure.
    public struct DispatchFailed: Error, CustomStringConvertible {
        public let status: Int32
        public let standardError: String
        public var description: String { "dispatch exited with \(status): \(standardError)" }
    }
}
