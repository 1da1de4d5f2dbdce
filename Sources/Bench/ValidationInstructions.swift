import ChildProcesses
import Foundation
import JSON
import Notifications
import Records

/// `bench validation --instructions`: the validator's instructions per record against CPython's
/// `json.loads` on the same payloads, both counted by valgrind's callgrind (the target:
/// at least 3×; docs/performance.md).
///
/// Timed, the ratio moved with whatever else ran on the machine (2.0× to 2.7× in one day); an
/// instruction count does not. Each side runs twice, under callgrind: once over the corpus, once
/// over it six times; the difference of the two counts is five passes of the work alone (its
/// start, its corpus and its exit cancel out), divided by the records of five passes.
///
/// Instructions are not time: CPython's `json.loads` builds a dict and a string per key and value
/// (allocations that cost more time per instruction than the validator's scan), so the timed ratio
/// is lower than this one. Both are printed by `bench validation`; this is the machine-independent
/// one.
struct ValidationInstructions {
    let valgrind: String
    let python: String
    let corpus: Int
    /// The records' spacing, on both sides.
    let style: JSONStyle

    /// The passes of the longer run; the shorter makes one.
    static let passes = 6

    /// Validates `records`, `passes` times over, as ``BenchLoop/measure(seconds:records:)`` does,
    /// and returns (the child that `count()` runs under callgrind).
    static func validate(passes: Int, records: [RequestRecord]) {
        let validator = RequestValidator(allowedBundleIDs: ValidationCorpus.bundleIDs)
        let receivedAt = Date()
        let laidOut = records.map(LaidOutRecord.init)
        var accepted = 0
        var checksum = 0
        let whitespaceStorage = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: 1_024)
        defer { whitespaceStorage.deallocate() }
        for _ in 0..<passes {
            for index in records.indices {
                var whitespace = WhitespaceRuns(storage: whitespaceStorage)
                BenchLoop.validate(
                    records[index], laidOut: laidOut[index], with: validator, receivedAt: receivedAt, accepted: &accepted, checksum: &checksum,
                    whitespace: &whitespace)
            }
        }
        // Keeps the work observable so the optimiser cannot drop it.
        if checksum == 42 { print("") }
    }

    /// CPython's side: the payloads of a file, separated by NUL bytes (a pretty payload has line
    /// breaks), each decoded to a `str` first (as the timed comparison does), then `json.loads` of each, argv[2] times over.
    static let pythonScript = """
        import json, sys
        values = [value.decode() for value in open(sys.argv[1], "rb").read().split(b"\\0") if value]
        for _ in range(int(sys.argv[2])):
            for value in values: json.loads(value)
        """

    /// Counts both sides, prints the result and returns its JSON entry.
    func count() async throws -> JSONValue {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-validation-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let records = ValidationCorpus.records(count: corpus, sizes: 300...300, style: style)
        let payloads = folder.appendingPathComponent("payloads.jsonl")
        try Data(records.map { Array($0.value ?? []) }.joined(separator: [0])).write(to: payloads)
        // As `bench counts` runs `serve`: without its debug information, and with the shim that
        // lets valgrind run a Swift program whose main is async.
        let binary = try await BenchCommand.Counts.withoutDebugInformation(ProductBinary.ownPath, in: folder)
        let shim = try await BenchCommand.Counts.buildSigsuspendCopy(scripts: try CompareSetup.findScripts(), in: folder)

        func perRecord(_ name: String, environment: [String: String] = [:], _ command: (Int) -> [String]) async throws -> Double {
            let once = try await instructions(of: command(1), environment: environment, in: folder, name: "\(name)-1")
            let many = try await instructions(of: command(Self.passes), environment: environment, in: folder, name: "\(name)-\(Self.passes)")
            return Double(many - once) / Double((Self.passes - 1) * records.count)
        }
        let validator = try await perRecord("validator", environment: ["LD_PRELOAD": shim]) { passes in
            [binary, "validation", "--corpus", "\(corpus)", "--json-style", style.rawValue, "--count-passes", "\(passes)"]
        }
        let loads = try await perRecord("python") { passes in [python, "-c", Self.pythonScript, payloads.path, "\(passes)"] }
        let ratio = loads / validator
        print(
            "300-bytes, JSON \(style.rawValue), instructions per record (callgrind, \(records.count) records, \(Self.passes - 1) passes counted): "
                + "validation \(Int(validator.rounded())), CPython json.loads \(Int(loads.rounded())) of the same payloads: "
                + "CPython executes \(String(format: "%.2f", ratio))× the validator's instructions (target ≥ 3×)")
        return [
            "scenario": "validation-instructions",
            "mix": "300-bytes",
            "jsonStyle": .string(style.rawValue),
            "corpus": .number(JSONNumber(records.count)),
            "validatorInstructionsPerRecord": .number(JSONNumber(validator)),
            "pythonInstructionsPerRecord": .number(JSONNumber(loads)),
            "validationRatio": .number(JSONNumber(ratio)),
        ]
    }

    /// The instructions `command` executes under callgrind, every thread.
    private func instructions(of command: [String], environment: [String: String], in folder: URL, name: String) async throws -> Int {
        let output = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let child = try BenchChild(
            name: "callgrind-\(name)", executable: valgrind,
            arguments: ["--tool=callgrind", "--callgrind-out-file=\(output.path)/callgrind.out.%p"] + command, environment: environment)
        guard let usage = await child.waitForExit(limit: .seconds(600)), usage.exitedCleanly else {
            throw BenchError("\(command[0]) under callgrind failed or took over 600 s\(child.logTail)")
        }
        return try CallgrindCounts(folder: output).instructions
    }
}

/// A corpus record laid out once in memory of its own, as a consumed message lies in librdkafka's:
/// the validation benchmarks lend views of it, as the worker lends views of a consumed batch,
/// rather than copying an owned record into a temporary buffer for every validation (which the
/// worker never does, and which was a quarter of the counted instructions).
final class LaidOutRecord {
    private let bytes: UnsafeMutableRawBufferPointer
    private let headers: UnsafeMutableBufferPointer<LentHeader>
    private let layout: RequestRecord.Layout
    private let partition: Int32
    private let offset: Int64
    private let timestampMilliseconds: Int64?
    private let headerCount: Int

    init(_ record: RequestRecord) {
        bytes = .allocate(byteCount: max(record.laidOutByteCount, 1), alignment: 1)
        headerCount = record.headers.count
        headers = .allocate(capacity: max(headerCount, 1))
        layout = record.layOut(into: bytes, headers: headers)
        partition = record.source.partition
        offset = record.source.offset
        timestampMilliseconds = record.timestampMilliseconds
    }

    deinit {
        headers.baseAddress.map { _ = $0.deinitialize(count: headerCount) }
        headers.deallocate()
        bytes.deallocate()
    }

    /// Lends the record as a view, for the call.
    @inline(__always)
    func withView<Result>(_ body: (borrowing RecordView) -> Result) -> Result {
        let view = RecordView(
            key: layout.key, value: layout.value, headers: UnsafeBufferPointer(rebasing: headers[..<headerCount]), topic: layout.topic,
            partition: partition,
            offset: offset, timestampMilliseconds: timestampMilliseconds, owner: self)
        return body(view)
    }
}
