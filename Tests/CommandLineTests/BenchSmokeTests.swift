import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// `notification-dispatcher-bench run --quick` in every test run (CI included): each scenario runs
/// end to end through the built binaries (the bench starts the product beside it) with small counts. No figure is checked against a target; speed is the business
/// of the full run (docs/performance.md), never of a test.
@Suite struct BenchSmokeTests {
    @Test func everyScenarioRunsWithQuickCountsAndReportsItsFigures() async throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let run = try await BuiltBinary.run(["run", "--quick", "--json", json.path], executable: BuiltBinary.bench, limit: .seconds(900))
        #expect(run.exitedNormally && run.status == 0, "\(report(run))")

        let results = try #require(try JSONValue(parsing: Array(Data(contentsOf: json))).objectValue)
        let scenarios = ["dispatcher", "produce", "baseline", "gate-only", "latency", "extensions", "worker-memory", "deadline", "live-activities", "scaling"]
        #expect(results.keys.sorted() == scenarios.sorted())
        for scenario in ["dispatcher", "produce", "baseline", "gate-only", "latency", "extensions", "worker-memory", "live-activities"] {
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
        // Its CPU per call: always from start-up; over the second half only when calls ended after
        // the halfway mark (a quick run's may all answer in one batch) and took enough CPU for
        // /proc's ticks to measure, and then never 0.
        let workerMemory = try #require(results["worker-memory"]?.objectValue)
        #expect((workerMemory["cpuMicrosecondsPerCall"]?.numberValue?.doubleValue ?? 0) > 0)
        if let secondHalf = workerMemory["cpuMicrosecondsPerCallSecondHalf"] {
            #expect((secondHalf.numberValue?.doubleValue ?? 0) > 0, "a second-half figure is a measurement")
        }
        let scaling = try #require(results["scaling"]?.objectValue)
        #expect(scaling.keys.sorted() == ["bytes1024", "bytes300", "bytes4096", "workers1", "workers2", "workers4"])
    }

    /// `bench validation` beside CPython: both sides run their slices, alternating, and the ratio is
    /// reported over all of them and slice by slice.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs /usr/bin/python3"))
    func validationAlternatesSlicesWithCPython() async throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("validation-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let run = try await BuiltBinary.run(
            ["validation", "--seconds", "0.6", "--mix", "300-bytes", "--corpus", "64", "--stages", "--json", json.path],
            executable: BuiltBinary.bench, limit: .seconds(120))
        #expect(run.exitedNormally && run.status == 0, "\(report(run))")
        // Every stage reports a time per record, none of them zero.
        for stage in ["scan", "validate", "parse", "payload rules", "derived apns-id", "serialise"] {
            let line = run.standardOutput.split(separator: "\n").first { $0.hasPrefix("  \(stage): ") }
            let nanoseconds = line.flatMap { Int($0.dropFirst(stage.count + 4).prefix { $0.isNumber }) }
            #expect((nanoseconds ?? 0) > 0, "stage \(stage): \(line ?? "missing")")
        }

        let document = try #require(try JSONValue(parsing: Array(Data(contentsOf: json))).objectValue)
        let entries = try #require(document["results"]?.arrayValue)
        let results = entries.compactMap(\.objectValue)
        try #require(results.map { $0["scenario"]?.stringValue } == ["validation", "python-json-loads"])
        let validated = results[0]
        #expect((validated["records"]?.numberValue?.doubleValue ?? 0) > 0)
        #expect(validated["corpus"]?.numberValue?.doubleValue == 64)
        // Every record of the corpus is valid, so none may be rejected.
        #expect(validated["accepted"] == validated["records"])
        let python = results[1]
        #expect((python["loads"]?.numberValue?.doubleValue ?? 0) > 0)
        let sliceRatios = try #require(python["sliceRatios"]?.arrayValue)
        let slices = sliceRatios.compactMap { $0.numberValue?.doubleValue }
        #expect(slices.count == 6 && slices.allSatisfy { $0 > 0 })
        // The overall ratio is of the sums: all records over all CPU time, against all loads over theirs.
        func number(_ object: JSONObject, _ key: String) -> Double { object[key]?.numberValue?.doubleValue ?? .nan }
        let expected = (number(validated, "records") / number(validated, "cpuSeconds")) / (number(python, "loads") / number(python, "cpuSeconds"))
        let ratio = try #require(python["validationRatio"]?.numberValue?.doubleValue)
        #expect(abs(ratio - expected) <= expected * 1e-6)
        // Pinned (the default): CPython was started on the validator's one CPU.
        let cpu = try #require(python["pinnedCPU"]?.numberValue?.doubleValue, "this system pins threads")
        #expect(python["pythonCPUs"]?.arrayValue?.compactMap { $0.numberValue?.doubleValue } == [cpu])
    }

    /// `bench validation --instructions`: both sides counted under callgrind, the validator's and
    /// CPython's instructions per record positive and their ratio the one reported. Counts, not
    /// times: no figure is checked against the target.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") && FileManager.default.isExecutableFile(atPath: "/usr/bin/valgrind"),
            "needs /usr/bin/python3 and /usr/bin/valgrind"))
    func validationInstructionsCountsBothSides() async throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("validation-instructions-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let run = try await BuiltBinary.run(
            ["validation", "--instructions", "--corpus", "16", "--json", json.path], executable: BuiltBinary.bench, limit: .seconds(600))
        #expect(run.exitedNormally && run.status == 0, "\(report(run))")
        let document = try #require(try JSONValue(parsing: Array(Data(contentsOf: json))).objectValue)
        let entry = try #require(document["results"]?.arrayValue?.first?.objectValue)
        #expect(entry["scenario"]?.stringValue == "validation-instructions")
        #expect(entry["corpus"]?.numberValue?.doubleValue == 16)
        let validator = try #require(entry["validatorInstructionsPerRecord"]?.numberValue?.doubleValue)
        let python = try #require(entry["pythonInstructionsPerRecord"]?.numberValue?.doubleValue)
        #expect(validator > 0 && python > 0, "validator \(validator), CPython \(python)")
        let ratio = try #require(entry["validationRatio"]?.numberValue?.doubleValue)
        #expect(abs(ratio - python / validator) <= ratio * 1e-9)
        #expect(run.standardOutput.contains("instructions per record (callgrind, 16 records"), "\(run.standardOutput.suffix(1_000))")
    }

    /// Whether `/usr/bin/python3` can import confluent_kafka (the Python contenders and the
    /// output counter of `bench compare` need it).
    static let pythonHasConfluentKafka = ChildProcess.succeeds("/usr/bin/python3", ["-c", "import confluent_kafka"])

    /// `bench compare --quick`: every contender runs in a process of its own on its own broker,
    /// is stopped with SIGTERM, exits, and reports its figures having accounted for every record.
    @Test(.enabled(if: pythonHasConfluentKafka, "needs /usr/bin/python3 with confluent_kafka"))
    func compareRunsEveryContenderAndAccountsForEveryRecord() async throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("compare-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let run = try await BuiltBinary.run(
            ["compare", "--quick", "--json", json.path, "--scripts", scriptsFolder], executable: BuiltBinary.bench, limit: .seconds(600))
        #expect(run.exitedNormally && run.status == 0, "\(report(run))")

        let results = try #require(try JSONValue(parsing: Array(Data(contentsOf: json))).objectValue)
        let records = try #require(results["records"]?.numberValue?.doubleValue)
        #expect(records > 0)
        for contender in ["serve", "python", "floor", "c"] {
            let result = try #require(results[contender]?.objectValue, "\(contender) reports")
            func figure(_ name: String) -> Double { result[name]?.numberValue?.doubleValue ?? 0 }
            #expect(figure("records") == records, "\(contender) had every request")
            #expect(figure("outputs") >= records, "\(contender) wrote an output for every request")
            for name in ["recordsPerSecond", "cpuMicrosecondsPerRecord", "peakResidentMegabytes", "totalSeconds"] {
                #expect(figure(name) > 0, "\(contender) reports \(name)")
            }
        }
        // The same requests break the same rules for both gate-only contenders.
        let deadLetters = ["serve", "python"].map { results[$0]?.objectValue?["deadLetters"]?.numberValue?.doubleValue ?? 0 }
        #expect(deadLetters[0] > 0 && deadLetters[0] == deadLetters[1], "dead letters of serve and python: \(deadLetters)")
        #expect(run.standardOutput.contains("serve vs python:"), "the ratio line is printed")
        #expect(run.standardOutput.contains("serve vs the C floor:"), "the floor's ratio line is printed")
    }

    /// `bench counts --quick` with every input option away from its default, counting allocations
    /// only (callgrind's slowdown is for the release bench, not the test suite): each contender runs
    /// at the two record counts, and the figures per record are the difference between them.
    @Test(.enabled(if: pythonHasConfluentKafka, "needs /usr/bin/python3 with confluent_kafka"))
    func countsTakesTheMarginalCostOfStyledRequestsToFewDevicesInTheForeground() async throws {
        let json = FileManager.default.temporaryDirectory.appendingPathComponent("counts-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: json) }
        let run = try await BuiltBinary.run(
            ["counts", "--quick", "--no-callgrind", "--json-style", "pretty", "--devices", "50", "--app-state", "foreground",
             "--json", json.path, "--scripts", scriptsFolder],
            executable: BuiltBinary.bench, limit: .seconds(600))
        #expect(run.exitedNormally && run.status == 0, "\(report(run))")
        #expect(run.standardOutput.contains("input: JSON pretty, 50 devices in turn, apps in the foreground"), "\(run.standardOutput.suffix(1_000))")

        let results = try #require(try JSONValue(parsing: Array(Data(contentsOf: json))).objectValue)
        func number(_ object: JSONObject?, _ key: String) -> Double? { object?[key]?.numberValue?.doubleValue }
        #expect(number(results, "records") == 1_000 && number(results, "largerRecords") == 3_000)
        #expect(results["jsonStyle"]?.stringValue == "pretty" && results["appState"]?.stringValue == "foreground")
        #expect(number(results, "devices") == 50)
        for contender in ["serve", "c"] {
            let counts = try #require(results[contender]?.objectValue, "\(contender) reports")
            // The records between the two runs, and what each of them cost.
            #expect(number(counts, "records") == 2_000)
            let perRecord = try #require(number(counts, "jemallocAllocationsPerRecord"), "\(contender)")
            #expect(perRecord > 1, "\(contender): \(perRecord) allocations per record (librdkafka alone makes more than one)")
            // The figure per record is a quotient: multiplied back, it may miss the count in the last bit.
            let total = try #require(number(counts, "jemallocAllocations"), "\(contender)")
            #expect(abs(total - perRecord * 2_000) < 0.5, "\(contender): \(total) allocations, \(perRecord) per record")
            #expect(counts["instructions"] == nil, "no callgrind run, no instruction count")
        }
    }

    /// `requests` writes what compare and counts preload: in each style, every value that is JSON
    /// is what Python's `json.dumps` writes for it (separators `,` and `:`; its default; `indent=2`),
    /// the same value in every style but for its filler text, at about the same size; `--devices`
    /// gives that many keys.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs /usr/bin/python3"))
    func requestsInEveryStyleAreWhatPythonWrites() async throws {
        var written: [String: String] = [:]
        for style in ["compact", "spaced", "pretty"] {
            let run = try await BuiltBinary.run(
                ["requests", "--records", "400", "--json-style", style, "--devices", "7"], executable: BuiltBinary.bench)
            try #require(run.status == 0, "\(run.standardError)")
            written[style] = run.standardOutput
        }
        let check = """
            import hashlib, json, sys
            style = sys.argv[1]
            dumps = {"compact": lambda v: json.dumps(v, separators=(",", ":")), "spaced": json.dumps,
                     "pretty": lambda v: json.dumps(v, indent=2)}[style]
            lines = [json.loads(line) for line in sys.stdin.read().splitlines()]
            parsed = 0
            content = hashlib.sha256()
            for line in lines:
                try:
                    value = json.loads(line["rawValue"])
                except ValueError:
                    continue
                parsed += 1
                if dumps(value) != line["rawValue"]:
                    print("differs:", line["rawValue"][:200])
                # What the styles share: everything but the filler, which gives way to whitespace.
                del value["data"]["text"]
                content.update(json.dumps(value, sort_keys=True).encode())
            print(len(lines), parsed, len({line["key"] for line in lines}), sum(len(line["rawValue"]) for line in lines),
                  content.hexdigest())
            """
        var sizes: [String: Double] = [:]
        var contents: [String: Substring] = [:]
        for (style, lines) in written {
            let checked = try await ChildProcess.run("/usr/bin/python3", ["-c", check, style], input: Data(lines.utf8))
            #expect(checked.status == 0 && !checked.output.contains("differs:"), "\(style): \(checked.output.prefix(2_000))")
            let last = try #require(checked.output.split(separator: "\n").last).split(separator: " ")
            let figures = last.compactMap { Int($0) }
            try #require(figures.count == 4 && last.count == 5, "\(style): \(checked.output.suffix(500))")
            contents[style] = last[4]
            // 400 requests, of which 2 in 200 are broken JSON; 7 devices; the bytes of all values.
            #expect(figures[0] == 400 && figures[1] == 396 && figures[2] == 7, "\(style): \(figures)")
            sizes[style] = Double(figures[3])
        }
        // One content in three spellings.
        #expect(contents["spaced"] == contents["compact"] && contents["pretty"] == contents["compact"], "\(contents)")
        let compact = try #require(sizes["compact"])
        for style in ["spaced", "pretty"] {
            #expect(abs((sizes[style] ?? 0) - compact) <= compact * 0.02, "\(style): \(sizes[style] ?? 0) bytes against \(compact)")
        }
    }

    /// The product binary carries no benchmark: `bench` is not one of its subcommands.
    @Test func theProductHasNoBenchSubcommand() async throws {
        let run = try await BuiltBinary.run(["bench", "counts"])
        #expect(run.status == 64, "\(run.standardError)")
        let help = try await BuiltBinary.run(["--help"])
        #expect(help.status == 0 && help.standardOutput.contains("serve") && !help.standardOutput.contains("bench"), "\(help.standardOutput)")
    }

    /// `bench soak` (scripts/soak) takes minutes and is never run here: only its options are
    /// checked, before anything starts.
    @Test("bench soak refuses exactly-once on the mock cluster and options out of range")
    func soakParsing() async throws {
        let refused = [
            ["--broker", "mock", "--guarantee", "exactly-once"], ["--guarantee", "twice"], ["--broker", "kafka"], ["--workers", "0"],
            ["--activities", "5"], ["--kill-every", "0"],
        ]
        for arguments in refused {
            let run = try await BuiltBinary.run(["soak"] + arguments, executable: BuiltBinary.bench)
            #expect(run.status == 64, "\(arguments): \(run.standardError)")
        }
        let mock = try await BuiltBinary.run(["soak", "--broker", "mock", "--guarantee", "exactly-once"], executable: BuiltBinary.bench)
        #expect(mock.standardError.contains("needs --broker tansu"))
    }

    /// For a bench run's failure: how it ended, the tail of standard output (line-buffered: as far
    /// as the run got), and of standard error its start, from the crash report when there is one
    /// (Swift's runtime prints the crashed thread's backtrace first), and its end (a fatal error's
    /// message, a librdkafka assertion).
    private func report(_ run: BuiltBinary.Run) -> String {
        // The runtime's line per thread it could not stop for the report says nothing of the crash.
        let errors = run.standardError.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("swift-runtime: failed to suspend thread") }.joined(separator: "\n")
        let start = errors.range(of: "*** Program crashed")?.lowerBound ?? errors.startIndex
        let head = errors[start...].prefix(5_000)
        let tail = errors[head.endIndex...].suffix(2_000)
        return "bench \(run.exitedNormally ? "exited with status \(run.status)" : "ended by signal \(run.status)"); "
            + "standard output: \(run.standardOutput.suffix(3_000))\nstandard error: \(head)\(tail.isEmpty ? "" : "\n[…]\n\(tail)")"
    }

    /// `scripts/bench` of this package.
    private var scriptsFolder: String { BuiltBinary.packageRoot().appendingPathComponent("scripts/bench").path }
}
