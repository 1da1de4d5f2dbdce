public import Foundation
import Synchronization

extension BuiltBinary {
    /// How a run of the binary ended, with everything it printed.
    public struct Run: Sendable {
        /// The exit status (the signal number when a signal ended it).
        public let status: Int32
        /// Everything written to standard output.
        public let standardOutput: String
        /// Everything written to standard error.
        public let standardError: String
    }

    /// Runs the built binary to its end as a user would: `arguments`, `input` on standard input,
    /// in `directory` (the package root unless given), with the test's environment less the
    /// `NOTIFICATION_DISPATCHER_*` variables. Outputs go through files, so no pipe can fill up and
    /// stall it; it is killed when it runs longer than `limit` (a backstop, then ``TimedOut``).
    public static func run(
        _ arguments: [String], input: String = "", in directory: URL? = nil, limit: Duration = .seconds(120)
    ) async throws -> Run {
        let binary = URL(fileURLWithPath: try path())
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("nd-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let files = ["in", "out", "err"].map { scratch.appendingPathComponent($0) }
        try Data(input.utf8).write(to: files[0])
        for file in files.dropFirst() { try Data().write(to: file) }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = directory ?? packageRoot()
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("NOTIFICATION_DISPATCHER_") }
        process.standardInput = try FileHandle(forReadingFrom: files[0])
        process.standardOutput = try FileHandle(forWritingTo: files[1])
        process.standardError = try FileHandle(forWritingTo: files[2])
        let exit = ExitBox()
        process.terminationHandler = { exit.finish($0.terminationStatus) }
        try process.run()
        let what = "notification-dispatcher \(arguments.first ?? "") to exit"
        do {
            _ = try await withTimeLimit(limit, what) { await exit.wait() }
        } catch {
            process.terminate()
            _ = await exit.wait()
            throw error
        }
        return Run(
            status: await exit.wait(), standardOutput: try String(contentsOf: files[1], encoding: .utf8),
            standardError: try String(contentsOf: files[2], encoding: .utf8))
    }
}

/// A process's exit status, awaited by any number of tasks.
private final class ExitBox: Sendable {
    private let state = Mutex<(status: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))

    /// Records the status and wakes every waiter.
    func finish(_ status: Int32) {
        let waiters = state.withLock { state in
            state.status = status
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: status) }
    }

    /// The status, once the process has exited.
    func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let status: Int32? = state.withLock { state in
                if let status = state.status { return status }
                state.waiters.append(continuation)
                return nil
            }
            if let status { continuation.resume(returning: status) }
        }
    }
}
