import ChildProcesses
public import Foundation

/// How a program run to its end ended, with everything it printed, standard output and standard
/// error apart: ``run(_:_:input:in:environment:limit:)`` for any program (`python3`, `openssl`),
/// ``BuiltBinary/run(_:executable:input:in:limit:)`` for the package's own.
public struct ProgramRun: Sendable {
    /// The exit status (the signal number when a signal ended it).
    public let status: Int32
    /// Whether it exited by itself rather than by an uncaught signal.
    public let exitedNormally: Bool
    /// Everything written to standard output.
    public let standardOutput: String
    /// Everything written to standard error.
    public let standardError: String

    /// Runs `executable` (a path) to its end: `arguments`, `input` on standard input, in
    /// `directory` (this process's unless given), with `environment` (this process's unless given).
    /// Outputs go through files, so no pipe can fill up and stall it; it is killed when it runs
    /// longer than `limit` (a backstop, then ``TimedOut``).
    public static func run(
        _ executable: String, _ arguments: [String], input: String = "", in directory: URL? = nil,
        environment: [String: String]? = nil, limit: Duration = .seconds(120)
    ) async throws -> ProgramRun {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("nd-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let files = ["in", "out", "err"].map { scratch.appendingPathComponent($0) }
        try Data(input.utf8).write(to: files[0])
        let process = try SpawnedProcess(
            executable, arguments, environment: environment, directory: directory?.path,
            input: .file(files[0].path), output: .file(files[1].path), errorOutput: .file(files[2].path))
        let (termination, killed) = await process.waitForExit(limit: limit)
        let name = URL(fileURLWithPath: executable).lastPathComponent
        if killed { throw TimedOut(what: "\(name) \(arguments.first ?? "") to exit (killed after \(limit))") }
        return ProgramRun(
            status: termination.status, exitedNormally: termination.exitedNormally, standardOutput: try String(contentsOf: files[1], encoding: .utf8),
            standardError: try String(contentsOf: files[2], encoding: .utf8))
    }
}

extension BuiltBinary {
    /// How a run of the binary ended, with everything it printed.
    public typealias Run = ProgramRun

    /// Runs the built `executable` (the product unless named) to its end as a user would:
    /// `arguments`, `input` on standard input, in `directory` (the package root unless given), with
    /// the test's environment less the `NOTIFICATION_DISPATCHER_*` variables. Outputs go through files, so no pipe can fill up and
    /// stall it; it is killed when it runs longer than `limit` (a backstop, then ``TimedOut``).
    public static func run(
        _ arguments: [String], executable: String = product, input: String = "", in directory: URL? = nil, limit: Duration = .seconds(120)
    ) async throws -> Run {
        try await ProgramRun.run(
            try path(of: executable), arguments, input: input, in: directory ?? packageRoot(),
            environment: ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("NOTIFICATION_DISPATCHER_") },
            limit: limit)
    }
}
