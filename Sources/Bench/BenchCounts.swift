import ArgumentParser
import ChildProcesses
import DispatcherTools
import Foundation
import JSON

/// How a contender's process starts: as it is, or under a tool (valgrind's callgrind) and with
/// variables added to its environment (jemalloc's statistics).
struct ContenderLaunch: Sendable {
    /// The command that runs the contender (its path and arguments follow), e.g. valgrind.
    var wrapper: [String] = []
    /// Variables added to the contender's environment.
    var environment: [String: String] = [:]
    /// How long the contender may take to exit after SIGTERM (valgrind slows the shutdown too).
    var stopLimit: Duration = .seconds(60)
    /// librdkafka properties added to `serve`'s configuration.
    var serveProperties: [String: String] = [:]
    /// Lines added under `serve`'s `dispatch` section (indented by two spaces).
    var serveDispatch = ""
    /// Whole sections added to `serve`'s configuration.
    var serveSections = ""
    /// Arguments added to the C floor's.
    var cArguments: [String] = []

    /// The contender as it is.
    static let plain = ContenderLaunch()

    /// Starts `executable` with `arguments` this way.
    func child(name: String, executable: String, arguments: [String]) throws(BenchError) -> BenchChild {
        guard let tool = wrapper.first else {
            return try BenchChild(name: name, executable: executable, arguments: arguments, environment: environment)
        }
        return try BenchChild(name: name, executable: tool, arguments: wrapper.dropFirst() + [executable] + arguments, environment: environment)
    }
}

extension BenchCommand {
    /// `bench counts`: what a gate-only record costs, counted rather than timed, so that the
    /// figures are the same on any machine: instructions, `swift_retain` calls and allocations
    /// per record, of `serve` and of the C floor, over the same requests.
    struct Counts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "counts",
            abstract: "Count instructions, swift_retain calls and heap allocations per record of serve and the C floor (valgrind's callgrind, jemalloc's statistics).",
            discussion: """
                Each contender runs as in `bench compare` (a fresh embedded broker in its own process, \
                the same realistic requests preloaded, stopped with SIGTERM once it wrote one output per \
                request), at two record counts, --records and three times as many, each twice: under \
                valgrind's callgrind, which counts every instruction the process executes (every \
                thread, from its start to its exit) and every call to swift_retain, swift_release and \
                the allocator's entry points (malloc, calloc, realloc, posix_memalign, aligned_alloc); \
                and alone, with jemalloc's statistics printed at exit (MALLOC_CONF=stats_print:true; \
                the C floor gets jemalloc through LD_PRELOAD), whose small and large nrequests count \
                its allocations. A figure per record is the marginal cost: the larger run's count less \
                the smaller's, over the records between them, so that what a run costs once (start-up, \
                group join, restore, shutdown) cancels; what it costs once is reported beside it. \
                serve runs without librdkafka's \
                statistics (statistics.interval.ms 0) and with dispatch.commitInterval and \
                metrics.interval of an hour (it commits at its shutdown): they cost per second, not \
                per record, and a second under valgrind lasts some fifty times longer; for the same reason both run \
                with librdkafka's default fetch.wait.max.ms (500). Counts do not follow the \
                machine's speed, as times do, but they are not fixed either: how many records each \
                poll and each produced batch holds follows the threads' timing, and serve's \
                instructions per record moved by up to 10 % between runs on a busy machine (the C \
                floor's by 2 %). --rounds N runs the contenders N times, in alternating order, and \
                reports each round and the medians. \
                Needs valgrind, /usr/bin/python3 with confluent_kafka, cc and libjemalloc2. Build with -c release.
                """
        )

        /// The contenders counted.
        enum Contender: String, CaseIterable, Sendable {
            case serve, c

            /// The same contender in `bench compare`.
            var compared: Compare.Contender { self == .serve ? .serve : .c }
        }

        @Option(help: "Requests of a contender's smaller run (default 20,000; --quick 1,000); its larger run has three times as many.")
        var records: Int?

        /// The requests' JSON style and devices, and the apps' state.
        @OptionGroup var input: BenchInputOptions

        @Option(help: "Comma-separated contenders: serve, c.")
        var contenders: String = "serve,c"

        @Option(help: "The notification-dispatcher binary whose serve runs (default: the one beside this binary), e.g. an older build.")
        var serveBinary: String?

        @Option(help: "valgrind.")
        var valgrind: String = "/usr/bin/valgrind"

        @Option(help: "The Python interpreter with confluent_kafka (for counting outputs).")
        var python: String = "/usr/bin/python3"

        @Option(help: "The folder holding count-outputs.py and c-floor.c (default: scripts/bench, looked for above this binary and the current folder).")
        var scripts: String?

        @Option(help: "Partitions of each topic.")
        var partitions: Int32 = 64

        @Flag(help: "Skip the callgrind run (jemalloc's allocation count only).")
        var noCallgrind = false

        @Option(help: "Keep callgrind's output files in this folder, by contender and record count (for callgrind_annotate).")
        var keepCallgrind: String?

        @Flag(help: "Small counts (tests).")
        var quick = false

        @Option(help: "Rounds: each runs every contender, in alternating order; the report gives the medians.")
        var rounds: Int = 1

        @Option(help: "Also write the results as JSON to this file.")
        var json: String?

        var chosen: [Contender] {
            get throws {
                try contenders.split(separator: ",").map { name in
                    guard let contender = Contender(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                        throw ValidationError("unknown contender \(name); one of \(Contender.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    return contender
                }
            }
        }

        func validate() throws {
            guard try !chosen.isEmpty else { throw ValidationError("--contenders names none") }
            guard records.map({ $0 > 0 }) ?? true, partitions > 0, rounds > 0 else {
                throw ValidationError("--records, --partitions and --rounds must be positive")
            }
            if let serveBinary, !FileManager.default.isExecutableFile(atPath: serveBinary) {
                throw ValidationError("--serve-binary \(serveBinary) is not an executable file")
            }
            if !noCallgrind, !FileManager.default.isExecutableFile(atPath: valgrind) {
                throw ValidationError("\(valgrind) is not there: bench counts needs valgrind (Debian: valgrind), or --no-callgrind")
            }
            try NamedFile.validateOutput(json, role: "results file", option: "--json")
        }

        func run() async throws {
            let smaller = records ?? (quick ? 1_000 : 20_000)
            let larger = smaller * Self.largerMultiple
            // The smaller run's requests are the first of the larger's: the same records, more of them.
            let requests = input.requests(count: larger)
            try BenchKafka.checkFitsEmbeddedBroker(requests, partitions: partitions)
            // valgrind 3.19 (Debian 12) cannot read the DWARF 5 debug information Swift's compiler
            // writes, and gives up on the binary: it runs a copy without it (the symbols stay).
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("bench-counts-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: work) }
            let serve = try await Self.withoutDebugInformation(try ProductBinary.resolve(serveBinary), in: work)
            let setup = try await CompareSetup(
                python: python, scripts: scripts, serveBinary: serve, partitions: partitions,
                limit: .seconds(3_600), appState: input.appState, withC: try chosen.contains(.c))
            // valgrind faults on the read-only mask libdispatch gives sigsuspend (a Swift async
            // main's parked main thread): serve runs with a sigsuspend that passes a copy.
            let shim = try noCallgrind ? nil : await Self.buildSigsuspendCopy(scripts: setup.scripts, in: work)
            defer { if let cFloor = setup.cFloor { try? FileManager.default.removeItem(atPath: cFloor) } }
            print("\(smaller) and \(larger) realistic requests per contender (the mix of bench compare), \(partitions) partitions; "
                  + "per record: the larger run's count less the smaller's, over the \(larger - smaller) records between them")
            print("input: \(input.summary)")
            var rounds: [[Contender: RecordCounts]] = []
            for round in 1...self.rounds {
                if self.rounds > 1 { print("round \(round) of \(self.rounds):") }
                var results: [Contender: RecordCounts] = [:]
                // Alternating order: whatever the machine does meanwhile falls on both alike.
                let chosen = try chosen
                let order = round.isMultiple(of: 2) ? Array(chosen.reversed()) : chosen
                for contender in order {
                    let counts = try await self.count(contender, smaller: smaller, requests: requests, setup: setup, shim: shim)
                    print(counts.line(contender.rawValue))
                    results[contender] = counts
                }
                if let serve = results[.serve], let c = results[.c] { print(serve.comparison(to: c)) }
                rounds.append(results)
            }
            var medians: [(Contender, RecordCounts)] = []
            for contender in try chosen {
                medians.append((contender, RecordCounts.median(of: rounds.compactMap { $0[contender] })))
            }
            if self.rounds > 1 {
                print("medians of \(self.rounds) rounds:")
                for (contender, counts) in medians { print(counts.line(contender.rawValue)) }
                let byContender = Dictionary(medians, uniquingKeysWith: { first, _ in first })
                if let serve = byContender[.serve], let c = byContender[.c] { print(serve.comparison(to: c)) }
            }
            let results = medians
            if let json {
                let document = JSONValue.object(JSONObject(
                    [("records", .number(JSONNumber(smaller))), ("largerRecords", .number(JSONNumber(larger))),
                     ("partitions", .number(JSONNumber(Int(partitions))))] + input.json + [
                     ("rounds", .number(JSONNumber(self.rounds)))]
                        + results.map { ($0.0.rawValue, $0.1.json) }))
                try Data(document.serialized() + [0x0A]).write(to: URL(fileURLWithPath: json))
            }
        }

        /// The larger run's records over the smaller's. The marginal count's error from what varies
        /// between two runs of the same records (batch sizes follow the threads' timing; the
        /// start-up's share does not shrink with the records) is divided by the records between
        /// the runs: for the records both runs process in all, (k + 1) / (k − 1) of the error of
        /// one long run, 3 at twice as many, 2 at three times, 1.67 at four. Three takes most of
        /// the gain, and its larger run of the default 60,000 requests stays well within the
        /// embedded broker's 5 MiB per partition at 64 partitions.
        static let largerMultiple = 3

        /// `contender` at `smaller` records and at ``largerMultiple`` times as many (the first of
        /// `requests`), and what one more record costs between the two.
        private func count(
            _ contender: Contender, smaller: Int, requests: [BenchRequest], setup: CompareSetup, shim: String?
        ) async throws -> RecordCounts {
            for attempt in 1...Self.attempts {
                let small = try await countRun(contender, requests: Array(requests.prefix(smaller)), setup: setup, shim: shim)
                let large = try await countRun(contender, requests: requests, setup: setup, shim: shim)
                guard let problem = RunCounts.reprocessing(small, large) else { return RecordCounts(smaller: small, larger: large) }
                if attempt == Self.attempts { throw BenchError("\(contender.rawValue): \(problem)") }
                print("\(contender.rawValue): \(problem); counted again")
            }
            preconditionFailure("returned or thrown in the last attempt")
        }

        /// How many times a contender's pair of runs is counted before a reprocessing run fails
        /// the bench.
        static let attempts = 3

        /// One run of `contender` on `requests` under callgrind (unless --no-callgrind), then one
        /// alone for jemalloc's statistics: the whole process's counts, start-up and shutdown
        /// included.
        private func countRun(
            _ contender: Contender, requests: [BenchRequest], setup: CompareSetup, shim: String?
        ) async throws -> RunCounts {
            var counts = RunCounts(records: requests.count)
            if !noCallgrind {
                let folder = keepCallgrind.map { URL(fileURLWithPath: $0).appendingPathComponent("\(contender.rawValue)/\(requests.count)") }
                    ?? FileManager.default.temporaryDirectory.appendingPathComponent("bench-counts-\(UUID().uuidString.prefix(8))")
                // Kept files are those of the last round.
                try? FileManager.default.removeItem(at: folder)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                defer { if keepCallgrind == nil { try? FileManager.default.removeItem(at: folder) } }
                let launch = ContenderLaunch(
                    wrapper: [valgrind, "--tool=callgrind", "--callgrind-out-file=\(folder.path)/callgrind.out.%p",
                              "--compress-strings=no", "--compress-pos=no", "--dump-instr=no", "--dump-line=no"],
                    environment: contender == .serve ? shim.map { ["LD_PRELOAD": $0] } ?? [:] : [:],
                    stopLimit: .seconds(600), serveProperties: Self.perSecondWorkOff, serveDispatch: Self.perSecondDispatchOff,
                    serveSections: Self.perSecondSectionsOff, cArguments: Self.cPerSecondWorkOff)
                _ = try await setup.measure(contender.compared, requests: requests, launch: launch)
                counts.callgrind = try CallgrindCounts(folder: folder)
            }
            var environment = ["MALLOC_CONF": "stats_print:true"]
            if contender == .c {
                guard let jemalloc = Self.jemallocLibrary else {
                    throw BenchError("libjemalloc.so.2 not found (Debian: libjemalloc2): the C floor gets jemalloc by LD_PRELOAD")
                }
                environment["LD_PRELOAD"] = jemalloc
            }
            let launch = ContenderLaunch(
                environment: environment, serveProperties: Self.perSecondWorkOff, serveDispatch: Self.perSecondDispatchOff,
                serveSections: Self.perSecondSectionsOff, cArguments: Self.cPerSecondWorkOff)
            _ = try await setup.measure(contender.compared, requests: requests, launch: launch) { worker in
                counts.jemallocRequests = try JemallocStatistics.allocationRequests(in: worker.logFile)
            }
            return counts
        }

        /// What `serve` changes when counted: work paid per second rather than per record, which
        /// valgrind multiplies, since a second under it lasts some fifty times longer. librdkafka's
        /// statistics, which `serve` asks for every second (for its lag metrics) and parses, were
        /// half of every instruction; the fetches of caught-up partitions (`fetch.wait.max.ms`, 10
        /// in `bench compare`) another 45 % with `serve`'s 384 partitions (requests, responses,
        /// devices, activity commands, and the channels and activities tables it reads whole)
        /// against the C floor's 64. Counted with librdkafka's default wait (500 ms), as the C
        /// floor is.
        static let perSecondWorkOff = ["statistics.interval.ms": "0", "fetch.wait.max.ms": "500"]

        /// `serve`'s other work that follows the clock rather than the records: the commit every
        /// `dispatch.commitInterval` (with the health checks of the partitions' stalls that follow
        /// it) and the snapshot on the metrics topic every `metrics.interval`. Under callgrind a
        /// second lasts some fifty times longer, so each tick's work counted per record fifty
        /// times more than it costs outside it (about 900 instructions per record in all). The C
        /// floor commits nothing and publishes nothing; `serve` commits at its shutdown.
        static let perSecondDispatchOff = "  commitInterval: 1h\n"
        static let perSecondSectionsOff = "metrics:\n  interval: 1h\n"

        /// The C floor's side of ``perSecondWorkOff``: librdkafka's default fetch wait.
        static let cPerSecondWorkOff = ["-C", "fetch.wait.max.ms=500"]

        /// A copy of `binary` in `folder` without its debug information (`objcopy --strip-debug`).
        static func withoutDebugInformation(_ binary: String, in folder: URL) async throws -> String {
            let copy = folder.appendingPathComponent(URL(fileURLWithPath: binary).lastPathComponent).path
            let strip = try BenchChild(name: "objcopy", executable: "objcopy", arguments: ["--strip-debug", binary, copy])
            guard let usage = await strip.waitForExit(limit: .seconds(120)), usage.exitedCleanly else {
                throw BenchError("objcopy --strip-debug \(binary) failed (Debian: binutils)\(strip.logTail)")
            }
            return copy
        }

        /// Builds `sigsuspend-copy.c` (scripts/bench) into `folder` with cc.
        static func buildSigsuspendCopy(scripts: String, in folder: URL) async throws -> String {
            let library = folder.appendingPathComponent("sigsuspend-copy.so").path
            let build = try BenchChild(
                name: "cc", executable: "cc", arguments: ["-O2", "-shared", "-fPIC", "-o", library, scripts + "/sigsuspend-copy.c"])
            guard let usage = await build.waitForExit(limit: .seconds(120)), usage.exitedCleanly else {
                throw BenchError("building sigsuspend-copy.c failed (needs cc)\(build.logTail)")
            }
            return library
        }

        /// jemalloc's shared library, where Debian puts it.
        static var jemallocLibrary: String? {
            ["/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2", "/usr/lib/libjemalloc.so.2"]
                .first { FileManager.default.fileExists(atPath: $0) }
        }
    }
}

/// What one run of a contender counted, over its whole life.
struct RunCounts: Sendable {
    /// Requests processed.
    var records: Int
    /// From the run under callgrind, when there was one.
    var callgrind: CallgrindCounts?
    /// jemalloc's small and large `nrequests` at exit.
    var jemallocRequests: Int?

    /// The records the contender handed to librdkafka's producer in its run under callgrind.
    var produced: Int? {
        callgrind.map { $0.calls("rd_kafka_produceva") + $0.calls("rd_kafka_producev") }
    }

    /// Why `small` and `large` cannot make a marginal count, or nil when they can: a run that
    /// produced for more records than it was given processed some twice (the group rebalanced
    /// under valgrind, and records not committed, commits being off, were consumed again), and
    /// its counts hold that work too. Once measured (2026-12-02): a 20,000-record run produced
    /// 34,469 records and made the marginal count 17,049 instructions, less than half the true one.
    /// Produced per record must agree between the two runs within 10 % (a mix may produce more
    /// than one output per request, the same share in both).
    static func reprocessing(_ small: RunCounts, _ large: RunCounts) -> String? {
        guard let smallProduced = small.produced, let largeProduced = large.produced, small.records > 0, large.records > 0 else {
            return nil
        }
        let smallShare = Double(smallProduced) / Double(small.records)
        let largeShare = Double(largeProduced) / Double(large.records)
        guard abs(smallShare - largeShare) > 0.1 * max(smallShare, largeShare) else { return nil }
        return "the run of \(small.records) requests produced \(smallProduced) records and that of \(large.records) produced "
            + "\(largeProduced): one processed records twice (a rebalance under valgrind?), so their difference is no marginal count"
    }
}

/// What one more record costs a contender: the counts of its larger run less those of its smaller
/// one, over the records between them, so that start-up and shutdown cancel.
struct RecordCounts: Sendable {
    /// The records between the two runs (the larger's less the smaller's).
    var records: Int
    /// The larger run's callgrind counts less the smaller's, when counted.
    var callgrind: CallgrindCounts?
    /// The larger run's jemalloc allocations less the smaller's.
    var jemallocRequests: Int?
    /// The instructions of the smaller run beyond its records' marginal cost: what a run costs
    /// once (start-up, group join, restore, shutdown).
    var onceInstructions: Int?

    /// Counts as given (medians).
    init(records: Int, callgrind: CallgrindCounts? = nil, jemallocRequests: Int? = nil, onceInstructions: Int? = nil) {
        self.records = records
        self.callgrind = callgrind
        self.jemallocRequests = jemallocRequests
        self.onceInstructions = onceInstructions
    }

    /// The marginal counts between two runs of one contender on the same records, `larger` with more.
    init(smaller: RunCounts, larger: RunCounts) {
        records = larger.records - smaller.records
        if let small = smaller.callgrind, let large = larger.callgrind {
            let marginal = large.subtracting(small)
            callgrind = marginal
            let perRecord = Double(marginal.instructions) / Double(max(records, 1))
            onceInstructions = small.instructions - Int((perRecord * Double(smaller.records)).rounded())
        }
        if let small = smaller.jemallocRequests, let large = larger.jemallocRequests { jemallocRequests = large - small }
    }

    private func perRecord(_ value: Int) -> Double { Double(value) / Double(max(records, 1)) }

    /// Each figure's median over `rounds` (of one contender, with the same record counts): the
    /// upper middle one of an even count.
    static func median(of rounds: [RecordCounts]) -> RecordCounts {
        func middle(_ values: [Int]) -> Int? { values.isEmpty ? nil : values.sorted()[values.count / 2] }
        var median = RecordCounts(records: rounds.first?.records ?? 0)
        let counted = rounds.compactMap(\.callgrind)
        if let instructions = middle(counted.map(\.instructions)) {
            var callsByFunction: [String: Int] = [:]
            for function in ["swift_retain", "swift_release", "swift_slowAlloc"] + CallgrindCounts.allocatorEntryPoints {
                callsByFunction[function] = middle(counted.map { $0.calls(function) })
            }
            median.callgrind = CallgrindCounts(instructions: instructions, callsByFunction: callsByFunction)
        }
        median.jemallocRequests = middle(rounds.compactMap(\.jemallocRequests))
        median.onceInstructions = middle(rounds.compactMap(\.onceInstructions))
        return median
    }

    /// Its line of the report.
    func line(_ name: String) -> String {
        var parts: [String] = []
        if let callgrind {
            parts.append(String(format: "%.0f instructions, %.1f swift_retain, %.1f swift_release, %.2f allocator calls (%.2f by the Swift runtime) per record",
                                perRecord(callgrind.instructions), perRecord(callgrind.calls("swift_retain")),
                                perRecord(callgrind.calls("swift_release")), perRecord(callgrind.allocatorCalls),
                                perRecord(callgrind.calls("swift_slowAlloc"))))
        }
        if let jemallocRequests { parts.append(String(format: "jemalloc: %.2f allocations per record", perRecord(jemallocRequests))) }
        if let onceInstructions {
            parts.append(String(format: "once per run (start-up, join, shutdown): %.1f M instructions", Double(onceInstructions) / 1e6))
        }
        return "\(name): " + parts.joined(separator: "; ")
    }

    /// How `self` (serve) compares with `floor` (the C floor).
    func comparison(to floor: RecordCounts) -> String {
        var parts: [String] = []
        if let serve = callgrind, let c = floor.callgrind {
            parts.append(String(format: "%.2f× the C floor's instructions per record (target ≤ 2.0× on every JSON style)",
                                perRecord(serve.instructions) / max(floor.perRecord(c.instructions), 1)))
            parts.append(String(format: "%.2f allocator calls per record beyond the C floor's", perRecord(serve.allocatorCalls) - floor.perRecord(c.allocatorCalls)))
        }
        if let serve = jemallocRequests, let c = floor.jemallocRequests {
            parts.append(String(format: "%.2f jemalloc allocations per record beyond the C floor's", perRecord(serve) - floor.perRecord(c)))
        }
        return "serve against the C floor: " + parts.joined(separator: "; ")
    }

    /// Its entry in the JSON results: the differences between the two runs, and per record.
    var json: JSONValue {
        var fields: [(String, JSONValue)] = [("records", .number(JSONNumber(records)))]
        if let callgrind {
            fields += [
                ("instructions", .number(JSONNumber(callgrind.instructions))),
                ("swiftRetain", .number(JSONNumber(callgrind.calls("swift_retain")))),
                ("swiftRelease", .number(JSONNumber(callgrind.calls("swift_release")))),
                ("allocatorCalls", .number(JSONNumber(callgrind.allocatorCalls))),
                ("swiftSlowAlloc", .number(JSONNumber(callgrind.calls("swift_slowAlloc")))),
                ("instructionsPerRecord", .number(JSONNumber(perRecord(callgrind.instructions)))),
                ("swiftRetainPerRecord", .number(JSONNumber(perRecord(callgrind.calls("swift_retain"))))),
                ("allocatorCallsPerRecord", .number(JSONNumber(perRecord(callgrind.allocatorCalls)))),
            ]
        }
        if let onceInstructions { fields.append(("onceInstructions", .number(JSONNumber(onceInstructions)))) }
        if let jemallocRequests {
            fields += [
                ("jemallocAllocations", .number(JSONNumber(jemallocRequests))),
                ("jemallocAllocationsPerRecord", .number(JSONNumber(perRecord(jemallocRequests)))),
            ]
        }
        return .object(JSONObject(fields))
    }
}

/// Totals read from callgrind's output files of one process (`--compress-strings=no`, one file
/// per dump: the C floor dumps its measured part separately, so every file is summed).
struct CallgrindCounts: Sendable {
    /// Instructions executed (`Ir`), every thread.
    var instructions = 0
    /// Calls to each function, by name, every caller summed.
    var callsByFunction: [String: Int] = [:]

    /// The allocator's entry points.
    static let allocatorEntryPoints = ["malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc"]

    /// Calls to the allocator's entry points.
    var allocatorCalls: Int { Self.allocatorEntryPoints.reduce(0) { $0 + calls($1) } }

    /// Calls to `function`.
    func calls(_ function: String) -> Int { callsByFunction[function] ?? 0 }

    /// These counts less `other`'s, function by function (a run's less a shorter run's).
    func subtracting(_ other: CallgrindCounts) -> CallgrindCounts {
        var calls = callsByFunction
        for (function, count) in other.callsByFunction { calls[function, default: 0] -= count }
        return CallgrindCounts(instructions: instructions - other.instructions, callsByFunction: calls)
    }

    /// Counts as given.
    init(instructions: Int, callsByFunction: [String: Int]) {
        self.instructions = instructions
        self.callsByFunction = callsByFunction
    }

    /// Reads every `callgrind.out.*` file in `folder`.
    init(folder: URL) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("callgrind.out.") }
        guard !files.isEmpty else { throw BenchError("callgrind wrote no output in \(folder.path)") }
        for file in files {
            try add(String(decoding: Data(contentsOf: folder.appendingPathComponent(file)), as: UTF8.self))
        }
    }

    /// Adds one file's totals: its `summary:`/`totals:` line and its call lines. A call is a
    /// `cfn=NAME` line, then `calls=COUNT ...`, then the call's cost.
    mutating func add(_ text: String) {
        var callee: String?
        var total: Int?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("cfn=") {
                callee = Self.functionName(line.dropFirst(4))
            } else if line.hasPrefix("calls="), let callee {
                let count = line.dropFirst(6).prefix { $0 != " " }
                callsByFunction[callee, default: 0] += Int(count) ?? 0
            } else if line.hasPrefix("summary:") || line.hasPrefix("totals:") {
                let value = line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
                // Both lines may be there; they agree, so one is taken.
                total = total ?? value
            }
        }
        instructions += total ?? 0
    }

    /// A function's name without callgrind's object suffix (`malloc'2` is a recursion level).
    private static func functionName(_ text: Substring) -> String {
        String(text.prefix { $0 != "'" })
    }
}

/// jemalloc's statistics as `stats_print` writes them at exit.
enum JemallocStatistics {
    /// The allocation requests (small and large `nrequests`) in the report `file` holds: the
    /// merged arenas' when several arenas were used, else the one arena's.
    static func allocationRequests(in file: URL) throws -> Int {
        let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
        guard let start = text.range(of: "___ Begin jemalloc statistics ___") else {
            throw BenchError("no jemalloc statistics in the contender's output (does it run on jemalloc?)")
        }
        let report = text[start.upperBound...]
        let section = report.range(of: "Merged arenas stats:").map { report[$0.upperBound...] } ?? report
        var small: Int?
        var large: Int?
        for line in section.split(separator: "\n") {
            let fields = line.split(separator: " ")
            // `small:` and `large:`: allocated, nmalloc, rate, ndalloc, rate, nrequests, rate, ...
            guard fields.count > 6 else { continue }
            if fields[0] == "small:", small == nil { small = Int(fields[6]) }
            if fields[0] == "large:", large == nil { large = Int(fields[6]) }
            if small != nil, large != nil { break }
        }
        guard let small, let large else { throw BenchError("jemalloc's statistics have no small and large lines") }
        return small + large
    }
}
