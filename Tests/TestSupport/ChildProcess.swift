import ChildProcesses
public import Foundation
import Synchronization

/// A child process (kcat, Tansu, the built binary) whose standard output is collected as it arrives.
///
/// Started through ``SpawnedProcess`` (posix_spawn), never Foundation's `Process`, whose `run()`
/// crashes the test process now and then on Swift 6.3.1 for Linux (docs/testing.md).
public final class ChildProcess: Sendable {
    /// How a finished process ended.
    public struct Exit: Sendable {
        /// The exit status (or the signal number when a signal ended it).
        public var status: Int32
        /// Whether it exited by itself rather than by an uncaught signal.
        public var exitedNormally: Bool
        /// Everything it wrote to standard output.
        public var output: String
    }

    /// The process.
    private let process: SpawnedProcess
    /// The program's file name, for messages.
    private let name: String
    /// Standard output, in a box the reader thread holds (not `self`: a child left running by a
    /// failed test is killed when this object goes).
    private let output = OutputBuffer()

    /// Starts `executable` with `arguments`, writing `input` to its standard input and closing it;
    /// standard error goes to `standardError` (discarded when nil). The child inherits this
    /// process's environment with `environment`'s variables set over it, and its working
    /// directory unless `directory` names one.
    public init(
        _ executable: String, _ arguments: [String], input: Data? = nil, standardError: FileHandle? = nil,
        environment: [String: String] = [:], directory: String? = nil
    ) throws {
        name = URL(fileURLWithPath: executable).lastPathComponent
        let variables = environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { _, set in set }
        process = try SpawnedProcess(
            executable, arguments, environment: variables, directory: directory, input: .pipe, output: .pipe,
            errorOutput: standardError.map { .descriptor($0.fileDescriptor) } ?? .null)
        let reading = process.output!
        // A thread of its own: reading a pipe blocks until data or end of file.
        Thread { [output] in
            while true {
                let data = reading.availableData
                if data.isEmpty { break }
                output.data.withLock { $0.append(data) }
            }
            output.ended.open()
        }.start()
        let writing = process.input!
        if let input { writing.write(input) }
        try writing.close()
    }

    /// Standard output so far, as text.
    public var outputSoFar: String {
        String(decoding: output.data.withLock { $0 }, as: UTF8.self)
    }

    /// The process identifier.
    public var processIdentifier: Int32 { process.pid }

    /// Whether the process has ended (it is reaped then; ``waitForExit(limit:)`` still reports how).
    public var hasExited: Bool { process.terminationIfExited() != nil }

    /// Sends `signal` to the process.
    public func send(signal: Int32) {
        process.send(signal)
    }

    /// Waits until the process exited and its output is read (killing it after `limit`, then
    /// throwing ``TimedOut``).
    public func waitForExit(limit: Duration = .seconds(60)) async throws -> Exit {
        let (termination, killed) = await process.waitForExit(limit: limit)
        if killed { throw TimedOut(what: "\(name) to exit (killed after \(limit))") }
        // The process is gone, and with it the pipe's only writer (its descriptors above standard
        // error are closed in the child, so no sibling holds the pipe): the output ends now.
        await output.ended.wait()
        return Exit(status: termination.status, exitedNormally: termination.exitedNormally, output: outputSoFar)
    }

    /// Whether `executable` runs with `arguments` and exits with status 0, its output discarded;
    /// blocking, for the conditions of `.enabled(if:)` (a probe such as `python3 -c "import x"`).
    public static func succeeds(_ executable: String, _ arguments: [String]) -> Bool {
        guard let process = try? SpawnedProcess(executable, arguments, output: .null, errorOutput: .null) else { return false }
        return process.waitBlocking().exitedCleanly
    }

    /// Runs `executable` to completion and returns how it ended.
    public static func run(_ executable: String, _ arguments: [String], input: Data? = nil, limit: Duration = .seconds(60)) async throws -> Exit {
        try await ChildProcess(executable, arguments, input: input).waitForExit(limit: limit)
    }
}

/// A child's standard output so far, and whether it ended.
private final class OutputBuffer: Sendable {
    /// The bytes read so far.
    let data = Mutex(Data())
    /// Set by the reader thread once the output reached its end.
    let ended = Gate()
}
