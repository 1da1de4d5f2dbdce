import ChildProcesses
import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The launcher every child of the package goes through: real programs (`/bin/sh`, `sleep`,
/// `cat`, `pwd`), their exits, streams, directory and environment.
@Suite("Child processes: posix_spawn and wait4")
struct SpawnedProcessTests {
    /// A scratch file path, removed by the caller.
    private func scratchFile(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(name)-\(UUID().uuidString.prefix(8))").path
    }

    @Test("an exit status comes back as the child's own, and a clean exit as clean")
    func exitStatus() async throws {
        let failing = try SpawnedProcess("/bin/sh", ["-c", "exit 7"], output: .null, errorOutput: .null)
        let failed = try #require(await failing.waitForExit())
        #expect(failed.exitedNormally && failed.status == 7 && !failed.exitedCleanly)
        #expect(failed.description == "exited with status 7")
        let clean = try SpawnedProcess("/bin/sh", ["-c", "exit 0"]).waitBlocking()
        #expect(clean.exitedCleanly)
    }

    @Test("a child ended by a signal reports the signal, not an exit status")
    func signalDeath() async throws {
        let process = try SpawnedProcess("/bin/sleep", ["30"])
        process.send(SIGTERM)
        let termination = try #require(await process.waitForExit())
        #expect(!termination.exitedNormally && termination.status == SIGTERM)
        #expect(termination.description == "ended by signal \(SIGTERM)")
        // Reaped: a later signal goes nowhere (its id may belong to another process by now).
        process.send(SIGKILL)
        #expect(process.terminationIfExited() == termination)
    }

    @Test("standard input from a file, standard output and error to files")
    func files() throws {
        let input = scratchFile("in"), output = scratchFile("out"), error = scratchFile("err")
        defer { [input, output, error].forEach { try? FileManager.default.removeItem(atPath: $0) } }
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: input))
        let termination = try SpawnedProcess(
            "/bin/sh", ["-c", "tr a-z A-Z; echo oops >&2"], input: .file(input), output: .file(output), errorOutput: .file(error)
        ).waitBlocking()
        #expect(termination.exitedCleanly)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "HELLO\n")
        #expect(try String(contentsOfFile: error, encoding: .utf8) == "oops\n")
    }

    @Test("pipes both ways, and standard output joined to standard error's file")
    func pipes() async throws {
        let process = try SpawnedProcess("/bin/cat", [], input: .pipe, output: .pipe)
        let writer = try #require(process.input)
        writer.write(Data("through a pipe".utf8))
        try writer.close()
        let read = try #require(process.output).readDataToEndOfFile()
        #expect(String(decoding: read, as: UTF8.self) == "through a pipe")
        #expect(await process.waitForExit()?.exitedCleanly == true)

        let log = scratchFile("log")
        defer { try? FileManager.default.removeItem(atPath: log) }
        let both = try SpawnedProcess("/bin/sh", ["-c", "echo out; echo err >&2"], output: .errorOutput, errorOutput: .file(log))
        #expect(both.waitBlocking().exitedCleanly)
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "out\nerr\n")
    }

    @Test("the working directory and the environment are the ones given")
    func directoryAndEnvironment() throws {
        let output = scratchFile("pwd")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let termination = try SpawnedProcess(
            "/bin/sh", ["-c", "pwd; echo \"$GREETING\"; echo \"${HOME:-no home}\""], environment: ["GREETING": "hi", "PATH": "/usr/bin:/bin"],
            directory: "/usr", output: .file(output)
        ).waitBlocking()
        #expect(termination.exitedCleanly)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "/usr\nhi\nno home\n")
    }

    @Test("a child inherits no descriptor of this process beyond its three streams")
    func noInheritedDescriptors() throws {
        // A descriptor open here without close-on-exec, as a library might leave one.
        let kept = open("/dev/null", O_RDONLY)
        try #require(kept >= 0)
        defer { close(kept) }
        let output = scratchFile("fds")
        defer { try? FileManager.default.removeItem(atPath: output) }
        let termination = try SpawnedProcess("/bin/sh", ["-c", "ls /proc/self/fd"], output: .file(output)).waitBlocking()
        #expect(termination.exitedCleanly)
        // 0, 1, 2, and the descriptor `ls` opens on the directory it lists.
        let descriptors = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }
        #expect(!descriptors.contains(kept), "descriptors in the child: \(descriptors)")
        #expect(descriptors.count <= 4, "descriptors in the child: \(descriptors)")
    }

    @Test("a program that does not exist is a clear error naming it")
    func missingExecutable() {
        let error = #expect(throws: SpawnError.self) {
            _ = try SpawnedProcess("/nonexistent/program", [])
        }
        #expect(error?.executable == "/nonexistent/program")
        #expect(error?.description.contains("No such file") == true, "\(String(describing: error))")
    }

    @Test("a child that outlives its time limit is killed, and the wait returns soon after the limit")
    func timeLimit() async throws {
        let process = try SpawnedProcess("/bin/sleep", ["30"])
        let start = ContinuousClock.now
        let (termination, killed) = await process.waitForExit(limit: .milliseconds(300))
        let waited = ContinuousClock.now - start
        #expect(killed && !termination.exitedNormally && termination.status == SIGKILL)
        #expect(waited >= .milliseconds(300) && waited < .seconds(10), "waited \(waited)")
    }

    @Test("a child that ends within its time limit is not killed")
    func withinTimeLimit() async throws {
        let process = try SpawnedProcess("/bin/sh", ["-c", "exit 3"])
        let (termination, killed) = await process.waitForExit(limit: .seconds(30))
        #expect(!killed && termination.status == 3)
    }

    @Test("TestSupport's probe: true for a program that succeeds, false for one that fails or is missing")
    func probe() {
        #expect(ChildProcess.succeeds("/bin/sh", ["-c", "exit 0"]))
        #expect(!ChildProcess.succeeds("/bin/sh", ["-c", "exit 1"]))
        #expect(!ChildProcess.succeeds("/nonexistent/program", []))
    }
}
