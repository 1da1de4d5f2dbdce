import ChildProcesses
public import Foundation

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

    /// Runs the built `executable` (the product unless named) to its end as a user would:
    /// `arguments`, `input` on standard input, in `directory` (the package root unless given), with
    /// the test's environment less the `NOTIFICATION_DISPATCHER_*` variables. Outputs go through files, so no pipe can fill up and
    /// stall it; it is killed when it runs longer than `limit` (a backstop, then ``TimedOut``).
    public static func run(
        _ arguments: [String], executable: String = product, input: String = "", in directory: URL? = nil, limit: Duration = .seconds(120)
    ) async throws -> Run {
        let binary = URL(fileURLWithPath: try path(of: executable))
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("nd-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let files = ["in", "out", "err"].map { scratch.appendingPathComponent($0) }
        try Data(input.utf8).write(to: files[0])
        let process = try SpawnedProcess(
            binary.path, arguments,
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("NOTIFICATION_DISPATCHER_") },
            directory: (directory ?? packageRoot()).path,
            input: .file(files[0].path), output: .file(files[1].path), errorOutput: .file(files[2].path))
        let (termination, killed) = await process.waitForExit(limit: limit)
        if killed { throw TimedOut(what: "\(executable) \(arguments.first ?? "") to exit (killed after \(limit))") }
        return Run(
            status: termination.status, standardOutput: try String(contentsOf: files[1], encoding: .utf8),
            standardError: try String(contentsOf: files[2], encoding: .utf8))
    }
}
