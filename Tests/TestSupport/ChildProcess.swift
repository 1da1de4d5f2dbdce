public import Foundation
import Synchronization

/// A child process (kcat, the built binary) whose standard output is collected as it arrives.
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

    /// What the reader thread and the termination handler report.
    private struct State {
        var output = Data()
        var outputEnded = false
        var exit: (status: Int32, normally: Bool)?
        var waiter: CheckedContinuation<Void, Never>?

        /// Whether the process is gone and its output read to the end.
        var isFinished: Bool { outputEnded && exit != nil }
    }

    /// The state, in a box that the reader thread and the termination handler can hold.
    private final class Shared: Sendable {
        /// The state.
        let state = Mutex(State())

        /// Applies `change` and wakes the waiter once the process is finished.
        func update(_ change: (inout State) -> Void) {
            let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
                change(&state)
                guard state.isFinished else { return nil }
                let waiter = state.waiter
                state.waiter = nil
                return waiter
            }
            waiter?.resume()
        }
    }

    /// The process.
    private let process: Process
    /// Shared with the reader thread and the termination handler.
    private let shared = Shared()

    /// Starts `executable` with `arguments`, writing `input` to its standard input and closing it;
    /// standard error goes to `standardError` (discarded when nil). The child inherits this
    /// process's environment with `environment`'s variables set over it.
    public init(
        _ executable: String, _ arguments: [String], input: Data? = nil, standardError: FileHandle? = nil,
        environment: [String: String] = [:]
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, set in set }
        }
        let output = Pipe()
        let inputPipe = Pipe()
        process.standardOutput = output
        process.standardInput = inputPipe
        process.standardError = standardError ?? FileHandle.nullDevice
        self.process = process
        process.terminationHandler = { [shared] process in
            let exit = (process.terminationStatus, process.terminationReason == .exit)
            shared.update { $0.exit = exit }
        }
        try process.run()
        let reading = output.fileHandleForReading
        // A thread of its own: reading a pipe blocks until data or end of file.
        Thread { [shared] in
            while true {
                let data = reading.availableData
                if data.isEmpty { break }
                shared.state.withLock { $0.output.append(data) }
            }
            shared.update { $0.outputEnded = true }
        }.start()
        if let input { inputPipe.fileHandleForWriting.write(input) }
        try inputPipe.fileHandleForWriting.close()
    }

    deinit {
        // A test that failed before stopping its child must not leave it running.
        if process.isRunning { process.terminate() }
    }

    /// Standard output so far, as text.
    public var outputSoFar: String {
        String(decoding: shared.state.withLock { $0.output }, as: UTF8.self)
    }

    /// The process identifier.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Sends `signal` to the process.
    public func send(signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits until the process exited and its output is read (killing it after `limit`).
    public func waitForExit(limit: Duration = .seconds(60)) async throws -> Exit {
        do {
            try await withTimeLimit(limit, "\(process.executableURL?.lastPathComponent ?? "process") to exit") { [shared] in
                await withCheckedContinuation { continuation in
                    let finished = shared.state.withLock { state in
                        if state.isFinished { return true }
                        state.waiter = continuation
                        return false
                    }
                    if finished { continuation.resume() }
                }
            }
        } catch {
            process.terminate()
            throw error
        }
        return shared.state.withLock { state in
            Exit(status: state.exit?.status ?? -1, exitedNormally: state.exit?.normally ?? false, output: String(decoding: state.output, as: UTF8.self))
        }
    }

    /// Runs `executable` to completion and returns how it ended.
    public static func run(_ executable: String, _ arguments: [String], input: Data? = nil, limit: Duration = .seconds(60)) async throws -> Exit {
        try await ChildProcess(executable, arguments, input: input).waitForExit(limit: limit)
    }
}
