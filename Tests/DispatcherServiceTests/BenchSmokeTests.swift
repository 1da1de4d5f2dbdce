import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// `bench run --quick` in every test run (CI included): each scenario runs end to end through the
/// built binary with small counts. No figure is checked against a target; speed is the business
/// of the full run (docs/performance.md), never of a test.
@Suite struct BenchSmokeTests {
    @Test func everyScenarioRunsWithQuickCountsAndReportsItsFigures() async throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let run = try await ChildProcess.run(try BuiltBinary.path(), ["bench", "run", "--quick", "--json", json.path], limit: .seconds(900))
        #expect(run.exitedNormally && run.status == 0, "bench output: \(run.output.suffix(3_000))")

        let results = try #require(try JSONValue(parsing: Array(Data(contentsOf: json))).objectValue)
        let scenarios = ["dispatcher", "produce", "baseline", "gate-only", "latency", "extensions", "worker-memory", "deadline", "scaling"]
        #expect(results.keys.sorted() == scenarios.sorted())
        for scenario in ["dispatcher", "produce", "baseline", "gate-only", "latency", "extensions", "worker-memory"] {
            let rate = results[scenario]?.objectValue?["recordsPerSecond"]?.numberValue?.doubleValue ?? 0
            #expect(rate > 0, "\(scenario) reports a rate")
        }
        for scenario in ["latency", "extensions", "deadline"] {
            let measured = results[scenario]?.objectValue?["measured"]?.numberValue?.doubleValue ?? 0
            let p99 = results[scenario]?.objectValue?["latency"]?.objectValue?["p99Ms"]?.numberValue?.doubleValue
            #expect(measured > 0 && p99 != nil, "\(scenario) measured latencies")
        }
        // The worker's own process: at least its code and the Swift runtime are resident.
        let workerPeak = results["worker-memory"]?.objectValue?["peakResidentMegabytes"]?.numberValue?.doubleValue ?? 0
        #expect(workerPeak > 10, "the worker alone reports its peak resident memory")
        let scaling = try #require(results["scaling"]?.objectValue)
        #expect(scaling.keys.sorted() == ["bytes1024", "bytes300", "bytes4096", "workers1", "workers2", "workers4"])
    }
}
