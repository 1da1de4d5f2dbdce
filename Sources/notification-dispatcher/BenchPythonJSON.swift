import ChildProcesses
import Foundation

/// CPython's `json.loads` timed on the same payloads as `bench validation`, in the same run, so the
/// two rates compare work on the same machine under the same load.
enum PythonJSONBaseline {
    /// What CPython did.
    struct Result {
        /// Payloads parsed.
        var loads: Int
        /// CPU seconds it took (`time.process_time`).
        var cpuSeconds: Double
        /// `sys.version`, first word.
        var version: String
        /// Parses per CPU second.
        var loadsPerCPUSecond: Double { Double(loads) / max(cpuSeconds, 1e-9) }
    }

    /// Times `json.loads` over `values` round-robin for `seconds` of its CPU time (after one
    /// warm-up pass), with each value already a `str` (decoding is not part of the timing).
    static let script = """
        import json, sys, time
        values = [line.decode() for line in open(sys.argv[1], "rb").read().split(b"\\n") if line]
        seconds = float(sys.argv[2])
        for value in values: json.loads(value)
        count, start = 0, time.process_time()
        while True:
            for value in values: json.loads(value)
            count += len(values)
            elapsed = time.process_time() - start
            if elapsed >= seconds: break
        print(count, elapsed, sys.version.split()[0])
        """

    /// Runs `python` on `values` (one JSON document each, without newlines); nil when `python` is
    /// not there.
    static func measure(python: String, values: [[UInt8]], seconds: Double) throws -> Result? {
        guard FileManager.default.isExecutableFile(atPath: python) else { return nil }
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("bench-json-\(UUID().uuidString.prefix(8)).jsonl")
        try Data(values.joined(separator: [UInt8(ascii: "\n")])).write(to: input)
        defer { try? FileManager.default.removeItem(at: input) }
        let process = try SpawnedProcess(python, ["-c", script, input.path, String(seconds)], output: .pipe)
        let text = String(decoding: process.output?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        let termination = process.waitBlocking()
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard termination.exitedCleanly, fields.count == 3, let loads = Int(fields[0]), let cpu = Double(fields[1]) else {
            throw BenchError("\(python) did not time json.loads (\(termination)): \(text.prefix(500))")
        }
        return Result(loads: loads, cpuSeconds: cpu, version: String(fields[2]))
    }
}
