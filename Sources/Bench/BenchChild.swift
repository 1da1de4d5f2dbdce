import BlockingWork
import ChildProcesses
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process the benchmarks start and stop: the embedded broker, the webhook server, `serve`, the
/// Python contenders.
///
/// Started and reaped through ``SpawnedProcess`` (posix_spawn, and `wait4` on its own process id),
/// so that what the kernel accounted to exactly this process (CPU user and system time) comes
/// back when it exits. `getrusage(RUSAGE_CHILDREN)` would add every child reaped so far, the
/// embedded brokers included, and Foundation's `Process` reaps its children itself and keeps only
/// the status. Its standard error (and its standard output, unless captured as lines) goes to a
/// log file, whose end is shown when it fails.
final class BenchChild: Sendable {
    /// What the kernel reported when the process was reaped.
    typealias Usage = SpawnedProcess.Termination

    /// A line of standard output and when it was read.
    struct Line: Sendable {
        var text: String
        var instant: ContinuousClock.Instant
    }

    /// The name used in messages.
    let name: String
    /// The process id.
    let pid: pid_t
    /// Its standard output, line by line, when captured; finishes when the output closes.
    let lines: AsyncStream<Line>
    /// Where its standard error (and uncaptured standard output) goes.
    let logFile: URL
    /// The process.
    private let process: SpawnedProcess

    /// Starts `executable` (looked up on `PATH` when it has no slash) with `arguments`.
    /// - Parameters:
    ///   - captureOutput: deliver standard output through ``lines`` instead of the log.
    ///   - environment: variables added to this process's environment for the child (`bench
    ///     counts` sets jemalloc's `MALLOC_CONF` and `LD_PRELOAD` this way).
    init(
        name: String, executable: String, arguments: [String], captureOutput: Bool = false, environment: [String: String] = [:]
    ) throws(BenchError) {
        self.name = name
        logFile = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(name)-\(UUID().uuidString.prefix(8)).log")
        let process: SpawnedProcess
        do {
            process = try SpawnedProcess(
                executable, arguments,
                environment: environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 },
                output: captureOutput ? .pipe : .errorOutput, errorOutput: .file(logFile.path))
        } catch {
            throw BenchError("cannot start \(name): \(error)")
        }
        self.process = process
        pid = process.pid
        let (lines, continuation) = AsyncStream.makeStream(of: Line.self)
        self.lines = lines
        guard let reading = process.output else {
            continuation.finish()
            return
        }
        // A thread of its own: reading a pipe blocks until data or end of file.
        BlockingWork.startThread(named: "bench-\(name)-output") {
            var pending: [UInt8] = []
            while true {
                let data = reading.availableData
                if data.isEmpty { break }
                let instant = ContinuousClock.now
                pending += data
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(Line(text: String(decoding: pending[..<newline], as: UTF8.self), instant: instant))
                    pending.removeSubrange(...newline)
                }
            }
            continuation.finish()
        }
    }

    deinit {
        // SpawnedProcess's own deinit kills and reaps a child still running.
        try? FileManager.default.removeItem(at: logFile)
    }

    /// Sends `signal` to the process (nothing once it is reaped: its id may belong to another).
    func send(_ signal: Int32) {
        process.send(signal)
    }

    /// Reaps the process if it has exited, without waiting; its usage once it has.
    ///
    /// Not `ru_maxrss` for memory: Linux keeps the larger of the spawning process's peak and the
    /// child's across `exec` (posix_spawn's child runs in the parent's memory until then), so for
    /// a child of a large process it is the parent's; `peakResidentMegabytes(of:)` reads the
    /// child's own from /proc while it runs.
    func exitUsage() -> Usage? {
        process.terminationIfExited()
    }

    /// Waits up to `limit` for the process to exit; nil when it had not, and was killed.
    func waitForExit(limit: Duration) async -> Usage? {
        let (usage, killed) = await process.waitForExit(limit: limit)
        return killed ? nil : usage
    }

    /// Sends SIGTERM and waits up to `limit` for the exit; SIGKILL after that, and the error says so.
    func stop(limit: Duration = .seconds(60)) async throws(BenchError) -> Usage {
        send(SIGTERM)
        if let usage = await waitForExit(limit: limit) { return usage }
        throw BenchError("\(name) did not exit within \(limit) of SIGTERM and was killed\(logTail)")
    }

    /// The first line of standard output starting with `prefix`, minus the prefix, waiting up to
    /// `limit`; an error naming the process if it ends or stays silent.
    func announcement(_ prefix: String, limit: Duration = .seconds(60)) async throws -> String {
        let lines = self.lines
        let found: String? = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                for await line in lines where line.text.hasPrefix(prefix) { return String(line.text.dropFirst(prefix.count)) }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let found else {
            throw BenchError("\(name) did not print \"\(prefix)\" within \(limit)\(logTail)")
        }
        return found
    }

    /// The end of the log file, for an error message ("" when empty).
    var logTail: String {
        guard let data = try? Data(contentsOf: logFile), !data.isEmpty else { return "" }
        return "; the end of its output:\n" + String(decoding: data.suffix(2_000), as: UTF8.self)
    }
}
