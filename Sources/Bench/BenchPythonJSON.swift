import ChildProcesses
import Foundation

/// CPython's `json.loads` timed on the same payloads as `bench validation`, in slices that alternate
/// with the validator's, so that the two rates compare work done under the same load.
///
/// Why slices: on a shared machine the CPU time of the same loop moves by half between one minute
/// and the next. Timed one after the other, the ratio of two rates carried that drift (1.1× to 2.3×
/// for the same binary in one morning); timed in alternating slices, both see each phase.
final class PythonJSONBaseline {
    /// What CPython did in one slice.
    struct Slice {
        /// Payloads parsed.
        var loads: Int
        /// CPU seconds it took (`time.process_time`).
        var cpuSeconds: Double
        /// Parses per CPU second.
        var loadsPerCPUSecond: Double { Double(loads) / max(cpuSeconds, 1e-9) }
    }

    /// Reads the payloads (separated by NUL bytes, since a pretty payload has line breaks; each
    /// decoded to a `str` first: decoding is not part of the timing), parses them all once, prints
    /// its version and the CPUs it may run on (so that the bench can show it shares the
    /// validator's), then for each line of input (CPU seconds) parses them round-robin for that
    /// long and prints the count and the CPU time.
    static let script = """
        import json, os, sys, time
        values = [value.decode() for value in open(sys.argv[1], "rb").read().split(b"\\0") if value]
        for value in values: json.loads(value)
        print(sys.version.split()[0], ",".join(map(str, sorted(os.sched_getaffinity(0)))), flush=True)
        for line in sys.stdin:
            seconds = float(line)
            count, start = 0, time.process_time()
            while True:
                for value in values: json.loads(value)
                count += len(values)
                elapsed = time.process_time() - start
                if elapsed >= seconds: break
            print(count, elapsed, flush=True)
        """

    /// `sys.version`, first word.
    private(set) var version: String
    /// The CPUs the interpreter may run on (`os.sched_getaffinity`).
    private(set) var cpus: [Int] = []
    /// The interpreter's path, for messages.
    private let python: String
    private let process: SpawnedProcess
    private let input: URL
    /// Output read but not yet split into lines.
    private var pending: [UInt8] = []

    /// Starts `python` on `values` (one JSON document each, without newlines) and waits for its
    /// warm-up; nil when `python` is not there.
    static func start(python: String, values: [[UInt8]]) throws -> PythonJSONBaseline? {
        guard FileManager.default.isExecutableFile(atPath: python) else { return nil }
        return try PythonJSONBaseline(python: python, values: values)
    }

    private init(python: String, values: [[UInt8]]) throws {
        self.python = python
        input = FileManager.default.temporaryDirectory.appendingPathComponent("bench-json-\(UUID().uuidString.prefix(8)).jsonl")
        try Data(values.joined(separator: [0])).write(to: input)
        process = try SpawnedProcess(python, ["-c", Self.script, input.path], input: .pipe, output: .pipe)
        version = ""
        do {
            let fields = try readLine().split(separator: " ")
            version = fields.first.map(String.init) ?? ""
            cpus = fields.dropFirst().first.map { $0.split(separator: ",").compactMap { Int($0) } } ?? []
        } catch {
            finish()
            throw error
        }
    }

    /// Times `json.loads` for `seconds` of CPython's CPU time.
    func slice(seconds: Double) throws -> Slice {
        // A write to the pipe of an interpreter that has exited would end this process (SIGPIPE).
        if let termination = process.terminationIfExited() {
            throw BenchError("\(python) stopped before timing json.loads (\(termination))")
        }
        process.input?.write(Data("\(seconds)\n".utf8))
        let line = try readLine()
        let fields = line.split(separator: " ")
        guard fields.count == 2, let loads = Int(fields[0]), let cpu = Double(fields[1]) else {
            throw BenchError("\(python) did not time json.loads: \(line.prefix(500))")
        }
        return Slice(loads: loads, cpuSeconds: cpu)
    }

    /// Ends the interpreter (its input closes, so its loop ends) and removes the payload file; also
    /// after a failure (the interpreter is then reaped already).
    func finish() {
        try? process.input?.close()
        _ = process.waitBlocking()
        try? FileManager.default.removeItem(at: input)
    }

    /// The next line of the interpreter's output, without its newline.
    private func readLine() throws -> String {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            guard let chunk = process.output?.availableData, !chunk.isEmpty else {
                // Its output ended: it exited (or is exiting), so this wait is short.
                let termination = process.waitBlocking()
                throw BenchError("\(python) stopped before timing json.loads (\(termination)): \(String(decoding: pending.prefix(500), as: UTF8.self))")
            }
            pending += chunk
        }
    }
}
