import BlockingWork
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process the benchmarks start and stop: the embedded broker, the webhook server, `serve`, the
/// Python contenders.
///
/// Started with `posix_spawn` and reaped with `wait4` on its own process id, so that what the
/// kernel accounted to exactly this process (CPU user and system time) comes back when it exits. `getrusage(RUSAGE_CHILDREN)` would add every child reaped so far,
/// the embedded brokers included, and Foundation's `Process` reaps its children itself and keeps
/// only the status. Its standard error (and its standard output, unless captured as lines) goes
/// to a log file, whose end is shown when it fails.
final class BenchChild: Sendable {
    /// What the kernel reported when the process was reaped.
    struct Usage: Sendable {
        /// The raw wait status.
        var status: Int32
        /// CPU seconds in user mode.
        var userSeconds: Double
        /// CPU seconds in the kernel on its behalf.
        var systemSeconds: Double

        /// User plus system CPU seconds.
        var cpuSeconds: Double { userSeconds + systemSeconds }
        /// Whether it exited by itself with status 0.
        var exitedCleanly: Bool { status & 0x7F == 0 && (status >> 8) & 0xFF == 0 }
        /// "exited with status N" or "ended by signal N", for people.
        var description: String {
            status & 0x7F == 0 ? "exited with status \((status >> 8) & 0xFF)" : "ended by signal \(status & 0x7F)"
        }
    }

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
    /// Set once it is reaped: a process id may be waited for only once.
    private let reaped = Mutex<Usage?>(nil)

    /// Starts `executable` (looked up on `PATH` when it has no slash) with `arguments`.
    /// - Parameter captureOutput: deliver standard output through ``lines`` instead of the log.
    init(name: String, executable: String, arguments: [String], captureOutput: Bool = false) throws(BenchError) {
        self.name = name
        logFile = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(name)-\(UUID().uuidString.prefix(8)).log")
        var output: [Int32] = [-1, -1]
        if captureOutput {
            guard pipe(&output) == 0 else { throw BenchError("cannot make a pipe for \(name): \(String(cString: strerror(errno)))") }
            // Not inherited by the other children (a copy of the write end would keep the pipe open).
            _ = fcntl(output[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(output[1], F_SETFD, FD_CLOEXEC)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, logFile.path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, captureOutput ? output[1] : 2, 1)
        // The child starts with SIGTERM and SIGINT at their defaults and nothing blocked, whatever
        // this process did with them (an ignored signal would survive `exec`).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, executable, &actions, &attributes, argv, environ)
        if captureOutput { close(output[1]) }
        guard spawned == 0 else {
            if captureOutput { close(output[0]) }
            throw BenchError("cannot start \(name) (\(executable)): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        let (lines, continuation) = AsyncStream.makeStream(of: Line.self)
        self.lines = lines
        guard captureOutput else {
            continuation.finish()
            return
        }
        let reading = FileHandle(fileDescriptor: output[0], closeOnDealloc: true)
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
        // A benchmark that failed half-way must not leave its children running.
        if exitUsage() == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        try? FileManager.default.removeItem(at: logFile)
    }

    /// Sends `signal` to the process (nothing once it is reaped: its id may belong to another).
    func send(_ signal: Int32) {
        reaped.withLock { usage in
            if usage == nil { _ = kill(pid, signal) }
        }
    }

    /// Reaps the process if it has exited, without waiting; its usage once it has.
    func exitUsage() -> Usage? {
        reaped.withLock { usage in
            if let usage { return usage }
            var status: Int32 = 0
            var resources = rusage()
            guard wait4(pid, &status, WNOHANG, &resources) == pid else { return nil }
            func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
            // Not `ru_maxrss`: Linux keeps the larger of the spawning process's peak and the
            // child's across `exec` (posix_spawn's child runs in the parent's memory until then),
            // so for a child of a large process it is the parent's; `peakResidentMegabytes(of:)`
            // reads the child's own from /proc while it runs.
            usage = Usage(status: status, userSeconds: seconds(resources.ru_utime), systemSeconds: seconds(resources.ru_stime))
            return usage
        }
    }

    /// Waits up to `limit` for the process to exit (checking every 10 ms, never blocking a thread
    /// of the cooperative pool); nil if it is still running.
    func waitForExit(limit: Duration) async -> Usage? {
        let deadline = ContinuousClock.now + limit
        while true {
            if let usage = exitUsage() { return usage }
            guard ContinuousClock.now < deadline, (try? await Task.sleep(for: .milliseconds(10))) != nil else { return nil }
        }
    }

    /// Sends SIGTERM and waits up to `limit` for the exit; SIGKILL after that, and the error says so.
    func stop(limit: Duration = .seconds(60)) async throws(BenchError) -> Usage {
        send(SIGTERM)
        if let usage = await waitForExit(limit: limit) { return usage }
        send(SIGKILL)
        _ = await waitForExit(limit: .seconds(10))
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
