import ArgumentParser
import ChildProcesses
import Dispatcher
import DispatcherTools
import Foundation
import JSON
import Kafka
import Notifications
import Records

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension BenchCommand {
    /// `bench compare`: the side-by-side run. Each contender gets a fresh embedded broker
    /// (a process of its own) holding the same input, runs as a process of its own until it has
    /// written one output per record, is stopped with SIGTERM, and its CPU time comes from the
    /// kernel when it exits.
    struct Compare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "compare",
            abstract: "Run serve, a plain Python confluent-kafka worker and pass-through floors in Python and C side by side, each in a process of its own.",
            discussion: """
                Each contender, one after another: a fresh embedded broker in its own process (3 brokers, \
                --partitions per topic), the same realistic requests preloaded, the contender started, \
                its outputs (deliveries and dead letters) counted from the topics' end offsets, SIGTERM \
                once it wrote one per request, and its CPU (user + system) read with wait4 when it exits; \
                its peak RSS is its VmHWM just before SIGTERM. Needs /usr/bin/python3 with confluent_kafka (Debian python3-confluent-kafka) \
                for the Python contenders and for counting outputs; the C floor is built from scripts/bench/c-floor.c \
                with cc and pkg-config's librdkafka (scripts/install-librdkafka). Build with -c release.
                """
        )

        /// The contenders `--contenders` can name, in the order they run.
        enum Contender: String, CaseIterable, Sendable {
            case serve, python, floor, c

            /// What the contender is, for the report.
            var label: String {
                switch self {
                case .serve: "serve gate-only (the product: apps, no service extensions)"
                case .python: "python gate-only (confluent-kafka, json.loads, a few rules, json.dumps)"
                case .floor: "floor: Python confluent-kafka pass-through, no parsing"
                case .c: "c floor: librdkafka in C, consume and produce unchanged (scripts/bench/c-floor.c)"
                }
            }
        }

        @Option(help: "Requests per contender (default 300,000; --quick 3,000).")
        var records: Int?

        /// The requests' JSON style and devices, and the apps' state.
        @OptionGroup var input: BenchInputOptions

        @Option(help: "Comma-separated contenders, run in this order: serve, python, floor, c.")
        var contenders: String = "serve,python,floor,c"

        @Option(help: "The notification-dispatcher binary whose serve runs (default: the one beside this binary), e.g. an older build.")
        var serveBinary: String?

        @Option(help: "The Python interpreter with confluent_kafka.")
        var python: String = "/usr/bin/python3"

        @Option(help: "The folder holding python-worker.py, count-outputs.py and c-floor.c (default: scripts/bench, looked for above this binary and the current folder).")
        var scripts: String?

        @Option(help: "Partitions of each topic.")
        var partitions: Int32 = 64

        @Option(help: "Seconds each contender has to write its outputs.")
        var timeLimit: Int = 900

        @Flag(help: "Small counts (tests).")
        var quick = false

        @Option(help: "Also write the results as JSON to this file.")
        var json: String?

        /// The contenders named by `--contenders`.
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
            guard records.map({ $0 > 0 }) ?? true, partitions > 0, timeLimit > 0 else {
                throw ValidationError("--records, --partitions and --time-limit must be positive")
            }
            if let serveBinary, !FileManager.default.isExecutableFile(atPath: serveBinary) {
                throw ValidationError("--serve-binary \(serveBinary) is not an executable file")
            }
            try NamedFile.validateOutput(json, role: "results file", option: "--json")
        }

        func run() async throws {
            let count = records ?? (quick ? 3_000 : 300_000)
            let requests = input.requests(count: count)
            let bytes = requests.reduce(0) { $0 + $1.value.count }
            try BenchKafka.checkFitsEmbeddedBroker(requests, partitions: partitions)
            let setup = try await CompareSetup(
                python: python, scripts: scripts, serveBinary: try ProductBinary.resolve(serveBinary), partitions: partitions, limit: .seconds(timeLimit),
                appState: input.appState, withC: try chosen.contains(.c))
            defer { if let cFloor = setup.cFloor { try? FileManager.default.removeItem(atPath: cFloor) } }
            print(String(format: "machine: %d cores; %d requests per contender, %.0f bytes on average (%d–%d), %d invalid; "
                         + "each contender alone, on a fresh embedded broker in its own process (3 brokers, %d partitions)",
                         ProcessInfo.processInfo.activeProcessorCount, count, Double(bytes) / Double(max(1, count)),
                         requests.map(\.value.count).min() ?? 0, requests.map(\.value.count).max() ?? 0,
                         requests.indices.count { [193, 194, 195, 196, 197, 198].contains($0 % 200) }, partitions))
            print("input: \(input.summary)")
            var results: [(Contender, CompareResult)] = []
            for contender in try chosen {
                let result = try await setup.measure(contender, requests: requests)
                print(result.line(contender.label))
                results.append((contender, result))
            }
            let byContender = Dictionary(results, uniquingKeysWith: { first, _ in first })
            if let serve = byContender[.serve], let python = byContender[.python] {
                print(String(format: "serve vs python: %.2f× the records/s (target ≥ 2×), %.2f× the CPU per record; serve %.1f µs CPU per record (target ≤ 8)",
                             serve.recordsPerSecond / max(python.recordsPerSecond, 1e-9),
                             serve.cpuMicrosecondsPerRecord / max(python.cpuMicrosecondsPerRecord, 1e-9), serve.cpuMicrosecondsPerRecord))
            }
            if let serve = byContender[.serve], let floor = byContender[.c] {
                print(String(format: "serve vs the C floor: %.1f× the CPU per record (%.1f µs against %.1f µs)",
                             serve.cpuMicrosecondsPerRecord / max(floor.cpuMicrosecondsPerRecord, 1e-9),
                             serve.cpuMicrosecondsPerRecord, floor.cpuMicrosecondsPerRecord))
            }
            if let json {
                let document = JSONValue.object(JSONObject(
                    [("records", .number(JSONNumber(count))), ("partitions", .number(JSONNumber(Int(partitions))))] + input.json
                        + results.map { ($0.0.rawValue, $0.1.json(label: $0.0.label)) }))
                try Data(document.serialized() + [0x0A]).write(to: URL(fileURLWithPath: json))
            }
        }
    }
}

/// What one contender did.
struct CompareResult: Sendable {
    /// Requests preloaded.
    var records: Int
    /// Outputs (deliveries and dead letters) written when it had one for every request.
    var outputs: Int
    /// How many of them were dead letters (the same for every gate-only contender: the requests
    /// that break the rules).
    var deadLetters: Int
    /// Outputs per second from its first output to its last.
    var recordsPerSecond: Double
    /// Seconds from its first output to its last.
    var outputSeconds: Double
    /// Seconds from its start to its last output.
    var totalSeconds: Double
    /// Its own peak resident memory until SIGTERM (`VmHWM`), in megabytes.
    var peakResidentMegabytes: Double
    /// What the kernel accounted to it when it exited (its CPU).
    var usage: BenchChild.Usage

    /// CPU (user + system, the whole process from start to exit) per request, in microseconds.
    var cpuMicrosecondsPerRecord: Double { usage.cpuSeconds / Double(max(records, 1)) * 1e6 }

    /// Its line of the report.
    func line(_ label: String) -> String {
        String(format: "%@\n  %9.0f records/s (%d outputs, %d of them dead letters, for %d requests; %.2f s first to last output, %.2f s from start); "
               + "CPU %.2f s user + %.2f s system = %.1f µs per record; peak RSS %.0f MB",
               label, recordsPerSecond, outputs, deadLetters, records, outputSeconds, totalSeconds,
               usage.userSeconds, usage.systemSeconds, cpuMicrosecondsPerRecord, peakResidentMegabytes)
    }

    /// Its entry in the JSON results.
    func json(label: String) -> JSONValue {
        .object(JSONObject([
            ("label", .string(label)), ("records", .number(JSONNumber(records))), ("outputs", .number(JSONNumber(outputs))),
            ("deadLetters", .number(JSONNumber(deadLetters))),
            ("recordsPerSecond", .number(JSONNumber(recordsPerSecond))), ("outputSeconds", .number(JSONNumber(outputSeconds))),
            ("totalSeconds", .number(JSONNumber(totalSeconds))), ("userSeconds", .number(JSONNumber(usage.userSeconds))),
            ("systemSeconds", .number(JSONNumber(usage.systemSeconds))),
            ("cpuMicrosecondsPerRecord", .number(JSONNumber(cpuMicrosecondsPerRecord))),
            ("peakResidentMegabytes", .number(JSONNumber(peakResidentMegabytes))),
        ]))
    }
}

/// How `bench compare` runs one contender: the programs and scripts it needs, found once.
struct CompareSetup: Sendable {
    let python: String
    /// The folder of the benchmark scripts (scripts/bench).
    let scripts: String
    let workerScript: String
    let counterScript: String
    let serveBinary: String
    /// The product binary whose `broker` holds each contender's records: the one beside this
    /// binary, so that an older `serveBinary` is measured on the same broker as the current one
    /// (`serveBinary` itself when none is beside).
    let brokerBinary: String
    /// The C floor, built for this run when it is a contender.
    let cFloor: String?
    let partitions: Int32
    let limit: Duration
    /// The apps' `defaultAppState` in `serve`'s configuration and the Python worker's.
    let appState: BenchAppState

    /// Finds the scripts, checks that Python can import confluent_kafka, and builds the C floor
    /// when `withC`.
    init(
        python: String, scripts: String?, serveBinary: String, partitions: Int32, limit: Duration, appState: BenchAppState = .background,
        withC: Bool
    ) async throws {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw BenchError("\(python) is not there: bench compare needs Python 3 with confluent_kafka (Debian: python3-confluent-kafka)")
        }
        let folder = try scripts ?? Self.findScripts()
        self.scripts = folder
        workerScript = folder + "/python-worker.py"
        counterScript = folder + "/count-outputs.py"
        for script in [workerScript, counterScript] where !FileManager.default.fileExists(atPath: script) {
            throw BenchError("\(script) is missing (--scripts names the folder holding python-worker.py and count-outputs.py)")
        }
        self.python = python
        self.serveBinary = serveBinary
        brokerBinary = (try? ProductBinary.beside()) ?? serveBinary
        self.partitions = partitions
        self.limit = limit
        self.appState = appState
        cFloor = withC ? try await Self.buildCFloor(scripts: folder) : nil
    }

    /// Builds `c-floor.c` with `build-c-floor` (cc, pkg-config's librdkafka) into a temporary
    /// folder: a second or two, so every run measures the source as it is.
    private static func buildCFloor(scripts folder: String) async throws -> String {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("c-floor-\(UUID().uuidString.prefix(8))").path
        let build = try BenchChild(name: "build-c-floor", executable: "/bin/bash", arguments: [folder + "/build-c-floor", output])
        let usage = await build.waitForExit(limit: .seconds(300))
        guard let usage, usage.exitedCleanly, FileManager.default.isExecutableFile(atPath: output) else {
            throw BenchError("building the C floor failed (\(folder)/build-c-floor: needs cc and librdkafka's pkg-config file, as scripts/install-librdkafka installs)\(build.logTail)")
        }
        return output
    }

    /// `scripts/bench` in a folder above this binary (a build inside the repository) or above
    /// the current folder.
    static func findScripts() throws -> String {
        let starts = [URL(fileURLWithPath: ProductBinary.ownPath).deletingLastPathComponent(),
                      URL(fileURLWithPath: FileManager.default.currentDirectoryPath)]
        for start in starts {
            var folder = start
            while true {
                let candidate = folder.appendingPathComponent("scripts/bench")
                if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("python-worker.py").path) { return candidate.path }
                guard folder.path != "/" else { break }
                folder.deleteLastPathComponent()
            }
        }
        throw BenchError("scripts/bench/python-worker.py not found above this binary or the current folder: give --scripts")
    }

    /// Runs `contender` on a fresh broker holding `requests`, and measures it.
    /// - Parameters:
    ///   - launch: how its process starts (`bench counts` runs it under valgrind, or with
    ///     jemalloc's statistics printed at exit).
    ///   - inspect: called with the contender's process once it exited, before its log is gone.
    func measure(
        _ contender: BenchCommand.Compare.Contender, requests: [BenchRequest], launch: ContenderLaunch = .plain,
        inspect: (BenchChild) throws -> Void = { _ in }
    ) async throws -> CompareResult {
        let broker = try BenchChild(
            name: "broker", executable: brokerBinary,
            arguments: ["broker", "--brokers", "3", "--partitions", String(partitions)], captureOutput: true)
        let bootstrap = try await broker.announcement("bootstrap: ")
        let topics = TopicSettings()
        let kafka = try BenchKafka(bootstrap: bootstrap, partitions: partitions)
        try await kafka.preload(requests, topic: topics.requests)

        let counter = try BenchChild(
            name: "count-outputs", executable: python,
            arguments: [counterScript, "--bootstrap", bootstrap, "--topics", "\(topics.deliveries),\(topics.deadLetter)"], captureOutput: true)
        _ = try await counter.announcement("ready")

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-compare-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let group = "bench-compare-\(contender.rawValue)-\(UUID().uuidString.prefix(8))"
        let start = ContinuousClock.now
        let worker: BenchChild
        switch contender {
        case .serve:
            worker = try Scenarios.startServe(
                binary: serveBinary, bootstrap: bootstrap, groupId: group, topics: topics, apps: Scenarios.apps(BenchRequest.realisticApps, appState: appState),
                properties: ["fetch.wait.max.ms": "10"].merging(launch.serveProperties) { $1 }, in: directory, launch: launch)
        case .c:
            guard let cFloor else { throw BenchError("the C floor was not built") }
            worker = try launch.child(
                name: "c-floor", executable: cFloor,
                arguments: ["--worker", "--bootstrap", bootstrap, "--group", group, "--input", topics.requests, "--output", topics.deliveries]
                    + launch.cArguments)
        case .python, .floor:
            worker = try launch.child(
                name: "python-worker", executable: python,
                arguments: [workerScript, "--bootstrap", bootstrap, "--group", group, "--apps", BenchRequest.realisticApps.joined(separator: ","),
                            "--app-state", appState.rawValue]
                    + (contender == .floor ? ["--pass-through"] : []))
        }
        let progress = try await Self.waitForOutputs(requests.count, counter: counter, worker: worker, limit: limit)
        // Its own peak (VmHWM, a high-water mark) up to now: ru_maxrss would report this
        // process's peak instead, which holds every request (see BenchChild.exitUsage).
        let peak = peakResidentMegabytes(of: worker.pid)
        let usage = try await worker.stop(limit: launch.stopLimit)
        guard usage.exitedCleanly else { throw BenchError("\(worker.name) \(usage.description) after SIGTERM\(worker.logTail)") }
        try inspect(worker)
        _ = try await counter.stop()
        _ = try await broker.stop()
        let outputSeconds = (progress.last - progress.first.instant).milliseconds / 1_000
        return CompareResult(
            records: requests.count, outputs: progress.count, deadLetters: progress.deadLetters,
            recordsPerSecond: Double(progress.count - progress.first.count) / max(outputSeconds, 1e-9), outputSeconds: outputSeconds,
            totalSeconds: (progress.last - start).milliseconds / 1_000, peakResidentMegabytes: peak, usage: usage)
    }

    /// What the output counter saw: where the clock starts (its last empty poll, or its first
    /// count when it never saw the topics empty), the last count and when.
    struct Progress: Sendable {
        var first: (count: Int, instant: ContinuousClock.Instant)
        var count: Int
        var deadLetters: Int
        var last: ContinuousClock.Instant
    }

    /// Follows `counter`'s counts until `expected` outputs are written; fails if `worker` exits
    /// first or `limit` passes.
    private static func waitForOutputs(_ expected: Int, counter: BenchChild, worker: BenchChild, limit: Duration) async throws -> Progress {
        try await withThrowingTaskGroup(of: Progress?.self) { group in
            group.addTask {
                var first: (count: Int, instant: ContinuousClock.Instant)?
                // The last poll that found no output: the clock starts there, so that outputs
                // written between two polls still make a rate.
                var lastEmpty: ContinuousClock.Instant?
                for await line in counter.lines {
                    // The total, then deliveries, then dead letters.
                    let fields = line.text.split(separator: " ").compactMap { Int($0) }
                    guard fields.count == 3 else { continue }
                    guard fields[0] > 0 else {
                        lastEmpty = line.instant
                        continue
                    }
                    if first == nil { first = lastEmpty.map { (0, $0) } ?? (fields[0], line.instant) }
                    if fields[0] >= expected, let first {
                        return Progress(first: first, count: fields[0], deadLetters: fields[2], last: line.instant)
                    }
                }
                throw BenchError("the output counter stopped\(counter.logTail)")
            }
            group.addTask {
                let deadline = ContinuousClock.now + limit
                while ContinuousClock.now < deadline {
                    if let usage = worker.exitUsage() {
                        throw BenchError("\(worker.name) \(usage.description) before writing \(expected) outputs\(worker.logTail)")
                    }
                    try await Task.sleep(for: .milliseconds(50))
                }
                throw BenchError("\(worker.name) wrote fewer than \(expected) outputs within \(limit)")
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw BenchError("the output counter stopped")
        }
    }
}
