import ArgumentParser
import CStandardOutput
import DispatcherTools
import Foundation
import JSON
import Notifications

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(CDispatch)
// On Linux, Dispatch's C module also declares `timespec` (its copy of <time.h>'s), and with more
// files in this target the compiler came to take that declaration for `clock_gettime`'s, whose
// members MemberImportVisibility then wants imported from there.
import CDispatch
import Records
#endif

/// `notification-dispatcher-bench`: the benchmarks and the soak, one subcommand per scenario.
///
/// A binary of its own, not a subcommand of the product's: what a deployment runs carries no
/// benchmark code, and the benchmarks start the product (``ProductBinary``) as their contender,
/// the way a user runs it.
@main
struct BenchCommand: AsyncParsableCommand {
    /// The command's name, help and scenarios.
    static let configuration = CommandConfiguration(
        commandName: "notification-dispatcher-bench",
        abstract: "Run a benchmark scenario of notification-dispatcher and report its figures.",
        discussion: """
            Starts the product binary, notification-dispatcher, as the benchmarks' contender and \
            broker: the one beside this binary in the build folder (`swift build -c release` builds \
            both), or the one --serve-binary names where a subcommand takes it.
            """,
        subcommands: [Validation.self, Run.self, Compare.self, Counts.self, Requests.self, Webhook.self, Soak.self]
    )

    /// Runs the command with standard output line-buffered: each figure reaches a pipe (the test
    /// suite's, a CI log's) as it is printed, so a run that ends by a signal still shows how far
    /// it got; fully buffered, a pipe received nothing of it.
    static func main() async {
        standard_output_line_buffered()
        await main(nil)
    }
}

/// Options every scenario shares.
struct BenchOptions: ParsableArguments {
    /// How long each measurement runs.
    @Option(help: "Seconds to run each measurement.")
    var seconds: Double = 3

    /// Where to write the results as JSON, if anywhere.
    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    /// Refuses durations that are not positive or longer than an hour.
    func validate() throws {
        guard seconds > 0, seconds <= 3600 else { throw ValidationError("--seconds must be above 0 and at most 3600.") }
        // Found out before the measurements run, not after.
        try NamedFile.validateOutput(json, role: "results file", option: "--json")
    }
}

extension BenchCommand {
    /// `bench validation`: parse and validate request records on one thread.
    struct Validation: AsyncParsableCommand {
        /// The scenario's name and help.
        static let configuration = CommandConfiguration(
            commandName: "validation",
            abstract: "Validate request records (200 to 4096 bytes, and 300 bytes) on one core, as the worker does: in place, the rest on owned records."
        )

        /// The shared options.
        @OptionGroup var options: BenchOptions

        /// The one mix to run, if not all.
        @Option(help: "Run only this mix: mixed-200-4096 or 300-bytes.")
        var mix: String?

        /// The interpreter whose `json.loads` is timed beside the 300-byte mix.
        @Option(help: "Python interpreter whose json.loads is timed on the same 300-byte payloads (skipped when missing).")
        var python: String = "/usr/bin/python3"

        /// Whether both sides of the comparison with CPython run on one CPU.
        @Flag(inversion: .prefixedNo, help: "Run the validator and CPython on one CPU, the one the bench starts on (both meet the same neighbours).")
        var pin = true

        /// How many distinct records each mix cycles through.
        @Option(help: "Distinct records each mix cycles through; CPython loads the same payloads. 2048 (the default) keeps the 300-byte mix in the shared L3 cache, about 1.2 MB; 256 fits in one core's L2, as a record the worker has just received.")
        var corpus: Int = 2048

        /// Whether to time the stages alone too.
        @Flag(help: "Also time the stages alone: the grammar scan, a whole validation, the tree parse, payload rules on the tree, the derived apns-id, serialising.")
        var stages = false

        /// Whether to count instructions under callgrind instead of timing.
        @Flag(help: "Count instructions instead of timing: the validator's and CPython's json.loads per record of the 300-byte mix, each under valgrind's callgrind (the same on any machine).")
        var instructions = false

        /// valgrind, for --instructions.
        @Option(help: "valgrind, for --instructions.")
        var valgrind = "/usr/bin/valgrind"

        /// The records' spacing: the validator and CPython read the same bytes in each.
        @Option(help: "The values' spacing: compact, spaced (Python's json.dumps default) or pretty (json.dumps with indent=2); CPython loads the same bytes.")
        var jsonStyle: JSONStyle = .compact

        /// Set in the child that --instructions counts: validate the corpus this many times and exit.
        @Option(help: .hidden)
        var countPasses: Int?

        /// The payload size mixes measured.
        static let mixes: [(name: String, sizes: ClosedRange<Int>)] = [("mixed-200-4096", 200...4096), ("300-bytes", 300...300)]

        /// Refuses an unknown mix.
        func validate() throws {
            guard corpus >= 1, corpus <= 1_000_000 else { throw ValidationError("--corpus must be from 1 to 1000000.") }
            if countPasses.map({ $0 < 1 }) ?? false { throw ValidationError("--count-passes must be positive.") }
            if instructions, !FileManager.default.isExecutableFile(atPath: valgrind) {
                throw ValidationError("\(valgrind) is not there: --instructions needs valgrind (Debian: valgrind)")
            }
            if let mix, !Self.mixes.contains(where: { $0.name == mix }) {
                throw ValidationError("--mix must be one of \(Self.mixes.map(\.name).joined(separator: ", ")).")
            }
        }

        /// Measures each mix and prints (and optionally writes) the rates.
        func run() async throws {
            if let countPasses {
                return ValidationInstructions.validate(
                    passes: countPasses, records: ValidationCorpus.records(count: corpus, sizes: 300...300, style: jsonStyle))
            }
            if instructions {
                let counted = try await ValidationInstructions(valgrind: valgrind, python: python, corpus: corpus, style: jsonStyle).count()
                if let path = options.json {
                    let document: JSONValue = ["results": .array([counted])]
                    try Data(document.serialized() + [0x0A]).write(to: URL(fileURLWithPath: path))
                }
                return
            }
            var results: [JSONValue] = []
            // Before CPython starts: it inherits this thread's CPU.
            let cpu = pin ? CPUPinning.pinToCurrentCPU() : nil
            if pin {
                print(cpu.map { "pinned to CPU \($0), with CPython" } ?? "not pinned: this system cannot pin a thread to a CPU")
            }
            print("input: JSON \(jsonStyle.rawValue)")
            for mix in Self.mixes where self.mix == nil || self.mix == mix.name {
                let records = ValidationCorpus.records(count: corpus, sizes: mix.sizes, style: jsonStyle)
                // The 300-byte mix is timed beside CPython's json.loads, in alternating slices.
                let python = mix.sizes == 300...300 ? try PythonJSONBaseline.start(python: self.python, values: records.map { Array($0.value ?? []) }) : nil
                defer { python?.finish() }
                var result = BenchLoop.Result()
                var slices: [(validated: BenchLoop.Result, python: PythonJSONBaseline.Slice)] = []
                if let python {
                    for _ in 0..<Self.slices {
                        let validated = BenchLoop.measure(seconds: options.seconds / Double(Self.slices), records: records)
                        slices.append((validated, try python.slice(seconds: options.seconds / Double(Self.slices))))
                        result.add(validated)
                    }
                } else {
                    result = BenchLoop.measure(seconds: options.seconds, records: records)
                }
                let megabytes = Double(result.bytes) / 1_000_000
                print(
                    "\(mix.name): \(result.records) records in \(format(result.cpuSeconds)) s CPU (\(format(result.wallSeconds)) s wall): "
                        + "\(Int(result.recordsPerCPUSecond)) records/s/core, \(format(megabytes / result.cpuSeconds)) MB/s/core, "
                        + "\(result.accepted) accepted, \(result.records - result.accepted) rejected"
                )
                if stages { BenchLoop.measureStages(seconds: options.seconds, records: records) }
                results.append([
                    "scenario": "validation",
                    "mix": .string(mix.name),
                    "jsonStyle": .string(jsonStyle.rawValue),
                    "corpus": .number(JSONNumber(records.count)),
                    "records": .number(JSONNumber(result.records)),
                    "accepted": .number(JSONNumber(result.accepted)),
                    "bytes": .number(JSONNumber(result.bytes)),
                    "cpuSeconds": .number(JSONNumber(result.cpuSeconds)),
                    "wallSeconds": .number(JSONNumber(result.wallSeconds)),
                    "recordsPerSecondPerCore": .number(JSONNumber(Int(result.recordsPerCPUSecond))),
                ])
                if let python {
                    results.append(compare(result, with: slices, python: python, cpu: cpu))
                } else if mix.sizes == 300...300 {
                    print("CPython json.loads: skipped, \(self.python) is not there (--python names another interpreter)")
                }
            }
            if let path = options.json {
                let document: JSONValue = ["results": .array(results)]
                try Data(document.serialized() + [0x0A]).write(to: URL(fileURLWithPath: path))
            }
        }

        /// Slices of each side in the comparison with CPython.
        static let slices = 6

        /// Prints the validator's rate against CPython's `json.loads` on the same payloads, over all
        /// slices and slice by slice (the issue's target: validation at least 3× `json.loads`); its JSON entry.
        private func compare(
            _ validated: BenchLoop.Result, with slices: [(validated: BenchLoop.Result, python: PythonJSONBaseline.Slice)], python: PythonJSONBaseline,
            cpu: Int32?
        ) -> JSONValue {
            let loads = slices.reduce(0) { $0 + $1.python.loads }
            let cpuSeconds = slices.reduce(0) { $0 + $1.python.cpuSeconds }
            let loadsPerCPUSecond = Double(loads) / max(cpuSeconds, 1e-9)
            let ratio = validated.recordsPerCPUSecond / loadsPerCPUSecond
            let sliceRatios = slices.map { $0.validated.recordsPerCPUSecond / $0.python.loadsPerCPUSecond }.sorted()
            print("CPython \(python.version) json.loads of the same 300-byte payloads: \(Int(loadsPerCPUSecond)) loads/s/core; "
                  + "validation \(Int(validated.recordsPerCPUSecond)) records/s/core is \(format(ratio))× that (target ≥ 3×); "
                  + "\(slices.count) alternating slices of each, ratios \(format(sliceRatios.first ?? 0)) to \(format(sliceRatios.last ?? 0))")
            return [
                "scenario": "python-json-loads",
                "mix": "300-bytes",
                "jsonStyle": .string(jsonStyle.rawValue),
                "python": .string(python.version),
                "loads": .number(JSONNumber(loads)),
                "cpuSeconds": .number(JSONNumber(cpuSeconds)),
                "loadsPerSecondPerCore": .number(JSONNumber(Int(loadsPerCPUSecond))),
                "validationRatio": .number(JSONNumber(ratio)),
                "sliceRatios": .array(sliceRatios.map { .number(JSONNumber($0)) }),
                "pinnedCPU": cpu.map { .number(JSONNumber(Int($0))) } ?? .null,
                "pythonCPUs": .array(python.cpus.map { .number(JSONNumber($0)) }),
            ]
        }

        private func format(_ value: Double) -> String { String(format: "%.2f", value) }
    }
}

/// The timed loop of the validation scenario.
enum BenchLoop {
    /// What one measurement found.
    struct Result {
        var records = 0
        var accepted = 0
        var bytes = 0
        var cpuSeconds = 0.0
        var wallSeconds = 0.0
        var recordsPerCPUSecond: Double { Double(records) / max(cpuSeconds, 1e-9) }

        /// Adds another measurement's counts and times to these.
        mutating func add(_ other: Result) {
            records += other.records
            accepted += other.accepted
            bytes += other.bytes
            cpuSeconds += other.cpuSeconds
            wallSeconds += other.wallSeconds
        }
    }

    /// Validates `records` round-robin for `seconds` of wall time on this thread.
    static func measure(seconds: Double, records: [RequestRecord]) -> Result {
        let validator = RequestValidator(allowedBundleIDs: ValidationCorpus.bundleIDs)
        let receivedAt = Date()
        // Warm up caches and lazily initialised globals outside the timing.
        for record in records { _ = validator.validate(record, receivedAt: receivedAt) }
        let sizes = records.map { $0.value?.count ?? 0 }
        // Each record where it lies, as a consumed batch lends it (LaidOutRecord).
        let laidOut = records.map(LaidOutRecord.init)
        var result = Result()
        var checksum = 0
        let wallStart = ContinuousClock.now
        let cpuStart = threadCPUTime()
        let deadline = wallStart.advanced(by: .milliseconds(Int(seconds * 1000)))
        var index = 0
        var records = records
        // The worker's output buffer keeps this storage for every record's runs.
        let whitespaceStorage = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: 1_024)
        defer { whitespaceStorage.deallocate() }
        records.withUnsafeMutableBufferPointer { corpus in
            let base = corpus.baseAddress!
            repeat {
                for _ in 0..<512 {
                    // Moved out for the call and back after it, as the worker hands over the record it
                    // owns: read in place, the compiler copied the record for the call (a retain and
                    // a release per part, 4 % of the loop, whether read through the buffer, its base
                    // pointer or the array).
                    let record = (base + index).move()
                    var whitespace = WhitespaceRuns(storage: whitespaceStorage)
                    validate(
                        record, laidOut: laidOut[index], with: validator, receivedAt: receivedAt, accepted: &result.accepted,
                        checksum: &checksum, whitespace: &whitespace)
                    (base + index).initialize(to: consume record)
                    result.records += 1
                    result.bytes += sizes[index]
                    index = index + 1 == corpus.count ? 0 : index + 1
                }
            } while ContinuousClock.now < deadline
        }
        result.cpuSeconds = threadCPUTime() - cpuStart
        let wall = ContinuousClock.now - wallStart
        result.wallSeconds = Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18
        // Keeps the work observable so the optimiser cannot drop it.
        if checksum == 42 { print("") }
        return result
    }

    /// Validates one record as the worker does: in place, on a view of its bytes, noting its
    /// payload's whitespace in `whitespace` for the delivery's writer; a broadcast, and a payload
    /// only the parser reads, on the owned record. Counts it in `accepted` and `checksum` (which
    /// keeps the work observable, so that the optimiser cannot drop it).
    @inline(__always)
    static func validate(
        _ record: borrowing RequestRecord, laidOut: LaidOutRecord, with validator: RequestValidator, receivedAt: Date, accepted: inout Int,
        checksum: inout Int, whitespace: inout WhitespaceRuns
    ) {
        switch laidOut.withView({ validator.validateInPlace($0, recording: &whitespace) }) {
        case .request(let request):
            accepted += 1
            checksum &+= request.priority.rawValue &+ (request.payload.form == .compact ? 1 : 2)
        case .rejected(let rejection):
            checksum &+= rejection.status
        case .broadcast:
            switch validator.validate(record, receivedAt: receivedAt) {
            case .success(let request):
                accepted += 1
                checksum &+= request.deviceToken.utf8.count &+ (request.payload.hasAlertText ? 1 : 2)
            case .failure(let rejection):
                checksum &+= rejection.status
            }
        }
    }

    /// Times each stage of validation alone and prints nanoseconds per record.
    static func measureStages(seconds: Double, records: [RequestRecord]) {
        let validator = RequestValidator(allowedBundleIDs: ValidationCorpus.bundleIDs)
        let values = records.map { $0.value ?? [] }
        let parsed = values.compactMap { try? JSONValue(parsing: $0) }
        func time(_ name: String, _ body: (Int) -> Int) {
            var checksum = 0
            var count = 0
            let start = threadCPUTime()
            while threadCPUTime() - start < seconds / 3 {
                for index in 0..<values.count { checksum &+= body(index) }
                count += values.count
            }
            let elapsed = threadCPUTime() - start
            print("  \(name): \(Int(elapsed / Double(count) * 1e9)) ns per record\(checksum == 42 ? " " : "")")
        }
        time("parse") { index in (try? JSONValue(parsing: values[index]))?.objectValue?.count ?? 0 }
        // The grammar alone, as the payload's view checks it, with no rule read: what any payload
        // rule the view adds costs on top of it.
        time("scan") { index in
            values[index].withUnsafeBufferPointer { bytes in
                (try? JSONScanner.withScanner(over: bytes, maxDepth: JSONValue.maximumDepth) { scanner throws(JSONScanner.Unusual) in
                    try scanner.skipValue()
                    try scanner.finish()
                }) == nil ? 0 : 1
            }
        }
        time("validate") { index in
            if case .success = validator.validate(records[index]) { return 1 }
            return 0
        }
        time("payload rules") { index in (try? Payload(validating: parsed[index % parsed.count]))?.json.count ?? 0 }
        // Compared with an identifier no record of the corpus gets, so that the result is used and
        // the derivation is timed without writing its text.
        let elsewhere = MessageID.derived(for: TopicPartitionOffset(topic: "", partition: 0, offset: 0))
        time("derived apns-id") { index in MessageID.derived(for: records[index].source) == elsewhere ? 1 : 0 }
        time("serialise") { index in parsed[index % parsed.count].serialized().count }
    }

    /// CPU time consumed by this thread, in seconds.
    static func threadCPUTime() -> Double { seconds(of: CLOCK_THREAD_CPUTIME_ID) }

    /// CPU seconds used by every thread of this process so far (the worker, librdkafka's threads
    /// and, when embedded, the broker's).
    static func processCPUTime() -> Double { seconds(of: CLOCK_PROCESS_CPUTIME_ID) }

    /// The reading of a CPU-time clock, in seconds.
    private static func seconds(of clock: clockid_t) -> Double {
        var time = timespec()
        clock_gettime(clock, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}

/// Realistic request records: alerts, background updates, Live Activities, with custom data.
enum ValidationCorpus {
    /// The apps the records are for, in the order they take turns.
    static let apps = ["com.example.news", "com.example.game", "com.example.chat"]
    /// The same, as the validator's configured bundle IDs.
    static let bundleIDs = Set(apps)

    /// `count` records whose values have sizes spread over `sizes`, written in `style`, generated
    /// the same way every run: the same values in every style, the filler giving way to the
    /// whitespace so that the sizes stay the same.
    static func records(count: Int, sizes: ClosedRange<Int>, style: JSONStyle = .compact) -> [RequestRecord] {
        var random = SeededRandom(seed: 2026)
        return (0..<count).map { index in
            let target = sizes.lowerBound == sizes.upperBound ? sizes.lowerBound : Int.random(in: sizes, using: &random)
            let app = apps[index % apps.count]
            var headers = [RecordHeader(name: "apns-topic", value: app)]
            let value: [UInt8]
            switch index % 4 {
            case 0, 1:
                headers.append(RecordHeader(name: "apns-push-type", value: "alert"))
                value = pad(
                    #"{"aps":{"alert":{"title":"Breaking news \#(index)","body":"Something happened in the world — read more ✨","loc-args":["a","b"]},"badge":\#(index % 10),"sound":"default","mutable-content":1,"category":"NEWS","thread-id":"t\#(index % 7)"},"article":{"id":\#(1_000_000 + index),"score":0.875,"tags":["world","politics"],"author":null,"pin":false,"text":""#,
                    to: target, closing: #""}}"#, style: style)
            case 2:
                headers.append(RecordHeader(name: "apns-push-type", value: "background"))
                headers.append(RecordHeader(name: "apns-priority", value: "5"))
                headers.append(RecordHeader(name: "apns-id", value: "6BA7B811-9DAD-11D1-80B4-00C04FD430C8"))
                value = pad(#"{"aps":{"content-available":1},"sync":{"since":1700000000123,"kinds":[1,2,3],"cursor":""#, to: target, closing: #""}}"#, style: style)
            default:
                headers.append(RecordHeader(name: "apns-expiration", value: "1900000000"))
                headers.append(RecordHeader(name: "apns-collapse-id", value: "match-\(index)"))
                headers.append(RecordHeader(name: "traceparent", value: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
                value = pad(
                    #"{"aps":{"alert":"Goal! 2-1 \ud83c\udfc6","sound":{"critical":0,"name":"goal.caf","volume":0.8},"interruption-level":"time-sensitive","relevance-score":0.9},"match":{"home":"A","away":"B","minute":77,"events":[{"t":"goal","p":"X"},{"t":"card","p":"Y"}],"note":""#,
                    to: target, closing: #""}}"#, style: style)
            }
            let token = Hex.lowercase((0..<32).map { _ in UInt8.random(in: 0...255, using: &random) })
            return RequestRecord(
                key: Array(token.utf8), headers: headers, value: value,
                source: TopicPartitionOffset(topic: "notifications.requests", partition: Int32(index % 12), offset: Int64(index))
            )
        }
    }

    /// `prefix` + filler text + `closing` in `style`, as close to `size` bytes as the prefix allows.
    private static func pad(_ prefix: String, to size: Int, closing: String, style: JSONStyle) -> [UInt8] {
        BenchRequest.styled(prefix: Array(prefix.utf8), paddedTo: size, closing: Array(closing.utf8), style: style)
    }
}
