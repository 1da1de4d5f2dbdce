import ChildProcesses
import Foundation
import Testing

/// Runs a program to its end and collects what it printed (through files, so that no pipe can
/// fill up and stall it). Started with posix_spawn (``SpawnedProcess``), not Foundation's `Process`.
enum ChildProcess {
    /// How a run ended.
    struct Output: Sendable {
        let status: Int32
        let standardOutput: String
        let standardError: String
    }

    /// A run that exited with a non-zero status.
    struct Failed: Error, CustomStringConvertible {
        let output: Output
        var description: String { "exit status \(output.status): \(output.standardError)" }
    }

    /// Runs `executable` with `arguments` (and `input` on standard input, in `directory`) to its end.
    static func run(_ executable: String, _ arguments: [String], input: URL? = nil, directory: URL? = nil) async throws -> Output {
        let scratch = Support.temporaryDirectory("process")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out")
        let errURL = scratch.appendingPathComponent("err")
        let process = try SpawnedProcess(
            executable, arguments, directory: directory?.path, input: input.map { .file($0.path) } ?? .null,
            output: .file(outURL.path), errorOutput: .file(errURL.path))
        guard let termination = await process.waitForExit() else { throw CancellationError() }
        return Output(
            status: termination.status,
            standardOutput: try String(contentsOf: outURL, encoding: .utf8),
            standardError: try String(contentsOf: errURL, encoding: .utf8))
    }
}

extension Support {
    /// The package's root directory, found from this file's path.
    static let repositoryRoot: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/", !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
            directory.deleteLastPathComponent()
        }
        return directory
    }()

    /// The built `notification-dispatcher` executable (next to the test bundle, or in `.build/debug`).
    static func builtBinary() throws -> String {
        var candidates: [URL] = []
        if let testBundle = Bundle.main.executableURL {
            candidates.append(testBundle.deletingLastPathComponent().appendingPathComponent("notification-dispatcher"))
        }
        candidates.append(repositoryRoot.appendingPathComponent(".build/debug/notification-dispatcher"))
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "build the executable first (swift build --build-tests)").path
    }
}
