package import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `posix_spawn` and reaped with `wait4` on its own process id.
///
/// The package starts every child this way (the benchmarks' contenders, the tests' brokers, the
/// built binary, Python and kcat), never through Foundation's `Process`: on Swift 6.3.1 for Linux,
/// `Process.run()` reads past the end of a directory entry while it looks for the open file
/// descriptors to close (swift-corelibs-foundation PR #5472) and crashes the parent now and then.
/// Here the C library closes them: every descriptor above standard error is closed in the child
/// (`posix_spawn_file_actions_addclosefrom_np`), so a child never holds another child's pipe open.
///
/// The child starts with SIGTERM, SIGINT, SIGPIPE and SIGCHLD at their defaults and no signal
/// blocked, whatever this process did with them (an ignored signal would survive `exec`).
package final class SpawnedProcess: Sendable {
    /// Where the child's standard input comes from.
    package enum Input: Sendable {
        /// `/dev/null`.
        case null
        /// A file, read from its start.
        case file(String)
        /// A pipe: ``SpawnedProcess/input`` writes to it.
        case pipe
    }

    /// Where one of the child's output streams goes.
    package enum Output: Sendable {
        /// `/dev/null`.
        case null
        /// A file, created or truncated.
        case file(String)
        /// A pipe: ``SpawnedProcess/output`` or ``SpawnedProcess/errorOutput`` reads it.
        case pipe
        /// This process's own stream of the same number.
        case inherit
        /// An open descriptor of this process (it stays open here).
        case descriptor(Int32)
        /// Standard output only: wherever standard error goes (one log for both).
        case errorOutput
    }

    /// How the child ended, and what the kernel accounted to it.
    package struct Termination: Sendable, Equatable, CustomStringConvertible {
        /// The raw wait status.
        package var rawStatus: Int32
        /// CPU seconds in user mode.
        package var userSeconds: Double
        /// CPU seconds in the kernel on its behalf.
        package var systemSeconds: Double

        /// Whether it exited by itself rather than by an uncaught signal.
        package var exitedNormally: Bool { rawStatus & 0x7F == 0 }
        /// The exit status, or the number of the signal that ended it.
        package var status: Int32 { exitedNormally ? (rawStatus >> 8) & 0xFF : rawStatus & 0x7F }
        /// Whether it exited by itself with status 0.
        package var exitedCleanly: Bool { exitedNormally && status == 0 }
        /// User plus system CPU seconds.
        package var cpuSeconds: Double { userSeconds + systemSeconds }
        /// "exited with status N" or "ended by signal N", for people.
        package var description: String {
            exitedNormally ? "exited with status \(status)" : "ended by signal \(status)"
        }
    }

    /// The process id.
    package let pid: pid_t
    /// The write end of its standard input, when that is ``Input/pipe``.
    package let input: FileHandle?
    /// The read end of its standard output, when that is ``Output/pipe``.
    package let output: FileHandle?
    /// The read end of its standard error, when that is ``Output/pipe``.
    package let errorOutput: FileHandle?
    /// Set once it is reaped: a process id may be waited for only once, and after that it may
    /// belong to another process.
    private let reaped = Mutex<Termination?>(nil)

    /// Starts `executable` (a path; looked up on `PATH` when it has no slash) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment; nil: this process's.
    ///   - directory: the child's working directory; nil: this process's.
    /// - Throws: ``SpawnError`` when the child cannot be started (a missing executable, a file
    ///   that cannot be opened, no more processes).
    package init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        input: Input = .null, output: Output = .inherit, errorOutput: Output = .inherit
    ) throws(SpawnError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The parent's ends of the pipes, and the child's ends to close here once it started.
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        defer { childEnds.forEach { _ = close($0) } }
        func closeParentEnds() { parentEnds.compactMap { $0 }.forEach { _ = close($0) } }

        do throws(SpawnError) {
            switch input {
            case .null: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            case .file(let path): posix_spawn_file_actions_addopen(&actions, 0, path, O_RDONLY, 0)
            case .pipe:
                let (read, write) = try Self.makePipe(executable)
                parentEnds[0] = write
                childEnds.append(read)
                posix_spawn_file_actions_adddup2(&actions, read, 0)
            }
            // Standard error first, so that standard output can follow it (``Output/errorOutput``).
            for (number, stream) in [(Int32(2), errorOutput), (Int32(1), output)] {
                switch stream {
                case .null: posix_spawn_file_actions_addopen(&actions, number, "/dev/null", O_WRONLY, 0)
                case .file(let path):
                    // Appending: two processes (or two streams) writing one log never overwrite each other.
                    posix_spawn_file_actions_addopen(&actions, number, path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o644)
                case .pipe:
                    let (read, write) = try Self.makePipe(executable)
                    parentEnds[Int(number)] = read
                    childEnds.append(write)
                    posix_spawn_file_actions_adddup2(&actions, write, number)
                case .inherit: break
                case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, number)
                case .errorOutput:
                    if number == 1 { posix_spawn_file_actions_adddup2(&actions, 2, 1) }
                }
            }
            if let directory { try Self.changeDirectory(&actions, to: directory, for: executable) }
            try Self.closeOthers(&actions, for: executable)
        } catch {
            closeParentEnds()
            throw error
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { variables in
            variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { envp?.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = envp.map { posix_spawnp(&pid, executable, &actions, &attributes, argv, $0) }
            ?? posix_spawnp(&pid, executable, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            closeParentEnds()
            throw SpawnError(executable: executable, problem: String(cString: strerror(spawned)))
        }
        self.pid = pid
        self.input = parentEnds[0].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        self.output = parentEnds[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        self.errorOutput = parentEnds[2].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
    }

    deinit {
        // A caller that failed half-way must not leave its child running, or unreaped.
        if terminationIfExited() == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
    }

    /// Sends `signal` to the child (nothing once it is reaped: its id may belong to another).
    package func send(_ signal: Int32) {
        reaped.withLock { termination in
            if termination == nil { _ = kill(pid, signal) }
        }
    }

    /// How the child ended, reaping it if it has exited; nil while it runs. Never blocks: under
    /// the lock that keeps it reaped once.
    package func terminationIfExited() -> Termination? {
        reaped.withLock { termination in
            if let termination { return termination }
            var status: Int32 = 0
            var resources = rusage()
            guard wait4(pid, &status, WNOHANG, &resources) == pid else { return nil }
            func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
            termination = Termination(
                rawStatus: status, userSeconds: seconds(resources.ru_utime), systemSeconds: seconds(resources.ru_stime))
            return termination
        }
    }

    /// Waits for the child to end, blocking the calling thread (never call it on the
    /// cooperative pool: use ``waitForExit()`` there).
    package func waitBlocking() -> Termination {
        while true {
            // Waits for the exit without reaping it, outside the lock, so that ``send(_:)`` from
            // another thread never waits for the child; then reaps it (at once) under the lock.
            // An error (ECHILD: reaped by another thread meanwhile) finds the termination kept.
            var info = siginfo_t()
            _ = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT)
            if let termination = terminationIfExited() { return termination }
        }
    }

    /// Waits for the child to end, checking every 5 ms without blocking a thread; nil when the
    /// waiting task is cancelled first.
    package func waitForExit() async -> Termination? {
        while true {
            if let termination = terminationIfExited() { return termination }
            guard (try? await Task.sleep(for: .milliseconds(5))) != nil else { return nil }
        }
    }

    /// Waits up to `limit` for the child to end; after that (or at once when the waiting task is
    /// cancelled) it is killed (SIGKILL) and reaped, and the result says it was.
    package func waitForExit(limit: Duration) async -> (termination: Termination, killed: Bool) {
        let deadline = ContinuousClock.now + limit
        while true {
            // Looked at once more after the deadline passed: a sleep that came back late (its
            // task waited for a busy cooperative pool) must not kill a child that ended meanwhile.
            if let termination = terminationIfExited() { return (termination, false) }
            guard ContinuousClock.now < deadline else { break }
            // Cancelled: no sleep would wait any more, and polling until the deadline would spin.
            guard (try? await Task.sleep(for: .milliseconds(5))) != nil else { break }
        }
        send(SIGKILL)
        while true {
            if let termination = terminationIfExited() { return (termination, true) }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// A pipe whose two ends close on `exec`: the child gets its end through `dup2`, which
    /// clears the flag on the copy. (`pipe2(O_CLOEXEC)` would set it atomically, but glibc
    /// declares it only for _GNU_SOURCE; the children closing every descriptor above standard
    /// error covers the moment between.)
    private static func makePipe(_ executable: String) throws(SpawnError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw SpawnError(executable: executable, problem: "cannot make a pipe: \(String(cString: strerror(errno)))")
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    // glibc declares these two only for _GNU_SOURCE, which Swift's Glibc module does not define;
    // they are looked up by name once (glibc 2.29 and 2.34 added them; Debian 12 has 2.36).
    private typealias AddChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?) -> Int32
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
    private static let addChangeDirectory: AddChangeDirectory? = dlsym(nil, "posix_spawn_file_actions_addchdir_np").map {
        unsafeBitCast($0, to: AddChangeDirectory.self)
    }
    private static let addCloseFrom: AddCloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: AddCloseFrom.self)
    }

    private static func changeDirectory(_ actions: inout posix_spawn_file_actions_t, to directory: String, for executable: String) throws(SpawnError) {
        guard let addChangeDirectory else {
            throw SpawnError(executable: executable, problem: "this C library cannot set a child's working directory (posix_spawn_file_actions_addchdir_np)")
        }
        guard addChangeDirectory(&actions, directory) == 0 else {
            throw SpawnError(executable: executable, problem: "cannot run it in \(directory)")
        }
    }

    private static func closeOthers(_ actions: inout posix_spawn_file_actions_t, for executable: String) throws(SpawnError) {
        guard let addCloseFrom else {
            throw SpawnError(executable: executable, problem: "this C library cannot close a child's inherited descriptors (posix_spawn_file_actions_addclosefrom_np)")
        }
        _ = addCloseFrom(&actions, 3)
    }
}

/// A child process that could not be started.
package struct SpawnError: Error, CustomStringConvertible, Equatable {
    /// The program that was to run.
    package var executable: String
    /// What went wrong, for people.
    package var problem: String

    package var description: String { "cannot start \(executable): \(problem)" }
}
