import ChildProcesses
import Dispatcher
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `serve` processes of `bench soak`: one configuration file per worker name (its
/// `metrics.workerId`, and so its transactional id under exactly-once), one log file per start.
final class SoakWorkers: Sendable {
    /// Where the configurations and logs go.
    let directory: URL
    /// The consumer group they form.
    let group: String
    /// The names, `w1` to `wN`.
    let names: [String]
    private let binary: String
    /// Each name's running process, and how many times it was started.
    private let processes = Mutex<[String: (process: SpawnedProcess, starts: Int)]>([:])

    /// Writes each worker's configuration.
    init(count: Int, binary: String, bootstrap: String, guarantee: DeliveryGuarantee, properties: [String: String], in directory: URL) throws {
        self.directory = directory
        self.binary = binary
        group = "soak-\(UUID().uuidString.prefix(8).lowercased())"
        names = (1...count).map { "w\($0)" }
        for name in names {
            var yaml = "kafka:\n  bootstrapServers: \"\(bootstrap)\"\n  groupId: \(group)\n  properties:\n"
            yaml += properties.sorted { $0.key < $1.key }.map { "    \($0.key): \"\($0.value)\"\n" }.joined()
            yaml += "metrics:\n  interval: 1s\n  workerId: \(name)\nhttp:\n  host: 127.0.0.1\n  port: 0\n"
            yaml += "dispatch:\n  guarantee: \(guarantee.rawValue)\n  commitInterval: 200ms\napps:\n\(SoakWorkload.apps)"
            try Data(yaml.utf8).write(to: configuration(of: name))
        }
    }

    /// Worker `name`'s configuration file (also the one the offline `dispatch` run reads).
    func configuration(of name: String) -> URL {
        directory.appendingPathComponent("\(name).yaml")
    }

    /// Starts worker `name` (again, after a kill: same name, same transactional id), logging to
    /// `<name>.<start>.log`.
    func start(_ name: String) throws {
        let starts = processes.withLock { $0[name]?.starts ?? 0 } + 1
        let log = directory.appendingPathComponent("\(name).\(starts).log").path
        let process = try SpawnedProcess(
            binary, ["serve", "--config", configuration(of: name).path, "--log-level", "info"], output: .errorOutput, errorOutput: .file(log))
        processes.withLock { $0[name] = (process, starts) }
    }

    /// The names of the workers running now.
    var running: [String] {
        processes.withLock { all in all.filter { $0.value.process.terminationIfExited() == nil }.map(\.key).sorted() }
    }

    /// SIGKILLs worker `name` and waits for it to be gone.
    func kill(_ name: String) async {
        guard let process = processes.withLock({ $0[name]?.process }) else { return }
        process.send(SIGKILL)
        _ = await process.waitForExit(limit: .seconds(30))
    }

    /// Starts every worker that is not running; returns how many.
    func restartStopped() throws -> Int {
        let stopped = names.filter { !running.contains($0) }
        for name in stopped { try start(name) }
        return stopped.count
    }

    /// Asks every worker to stop (SIGTERM) and waits; the names of those that did not exit cleanly.
    func stopAll(limit: Duration = .seconds(60)) async -> [String] {
        let all = processes.withLock { $0 }
        for (_, entry) in all { entry.process.send(SIGTERM) }
        var unclean: [String] = []
        for (name, entry) in all.sorted(by: { $0.key < $1.key }) {
            let (termination, killed) = await entry.process.waitForExit(limit: limit)
            if killed || !termination.exitedCleanly { unclean.append(name) }
        }
        return unclean
    }

    /// Every line any start of any worker logged that holds `text`, prefixed by the log's name.
    func logLines(containing texts: [String]) -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".log") && $0.hasPrefix("w") }.sorted().flatMap { file in
            let text = (try? String(contentsOfFile: directory.appendingPathComponent(file).path, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").filter { line in texts.contains { line.contains($0) } }.map { "\(file): \($0.prefix(400))" }
        }
    }
}
