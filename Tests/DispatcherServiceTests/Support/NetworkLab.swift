import Foundation
import Synchronization
import TestSupport

/// Network namespaces on one bridge, for tests that cut a process off its broker: each host (the
/// broker, each worker) runs in a namespace of its own, joined to a bridge in the test's own
/// namespace by a veth pair, so that taking the pair's outer end down cuts that host off (its
/// packets go nowhere, its connections stay open and silent, as when a cable is pulled or a
/// switch port dies) while the others, and the test's own clients on the bridge, go on.
///
/// ```
///   test process (root namespace) ── bridge 10.213.N.254/24 ─┬─ veth ── broker namespace 10.213.N.1
///                                                             ├─ veth ── worker namespace 10.213.N.11
///                                                             └─ veth ── worker namespace 10.213.N.12
/// ```
///
/// Needs root and iproute2 (`ip`), as CI has; ``isAvailable`` says whether both are here and
/// namespaces can be made. `tc netem` is not used (not every kernel has it): faults are links
/// taken down and brought up. Every name starts with `nf`, the test process's id and the lab's
/// number, so that concurrent test processes never touch each other's, and the leftovers of a
/// test process that died (its id no longer running) are deleted when the next lab starts.
final class NetworkLab: Sendable {
    /// One namespace joined to the bridge.
    struct Host: Sendable {
        /// The namespace's name.
        var namespace: String
        /// The veth end on the bridge, in the test's namespace: down cuts the host off.
        var link: String
        /// The host's IPv4 address.
        var address: String
        /// The command that runs a program in the namespace, before the program's own arguments.
        var launcher: [String]
    }

    /// The lab's names start with this.
    let prefix: String
    /// The bridge in the test's namespace.
    let bridge: String
    /// The first three octets of the lab's /24.
    let subnet: String
    /// The broker's namespace (address `.1`).
    let brokerHost: Host
    private let hosts = Mutex<[Host]>([])
    private let nextHost = Mutex(11)

    /// The `ip` program, nil when iproute2 is missing.
    static let ip: String? = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether this process runs as root with `ip`, and a namespace and a bridge can be made
    /// (checked once, by making and deleting them): for `.enabled(if:)`.
    static let isAvailable: Bool = {
        guard geteuid() == 0, let ip else { return false }
        let probe = namePrefix(sequence: 0) + "p"
        defer {
            _ = ChildProcess.succeeds(ip, ["netns", "delete", probe])
            _ = ChildProcess.succeeds(ip, ["link", "delete", probe])
        }
        return ChildProcess.succeeds(ip, ["netns", "add", probe]) && ChildProcess.succeeds(ip, ["link", "add", probe, "type", "bridge"])
    }()

    /// Labs of this process, numbered from 1.
    private static let sequence = Mutex(0)
    /// The prefixes of this process's labs still set up (not leftovers).
    private static let active = Mutex<Set<String>>([])

    /// `nf<pid in base 36>_<sequence in base 36>`: at most 10 characters, leaving room in an
    /// interface name (15 at most) for a role and a side.
    private static func namePrefix(sequence: Int) -> String {
        "nf\(String(getpid(), radix: 36))_\(String(sequence, radix: 36))"
    }

    private init(prefix: String, subnet: String, brokerHost: Host) {
        self.prefix = prefix
        self.subnet = subnet
        bridge = prefix + "br"
        self.brokerHost = brokerHost
    }

    /// Sets up a lab (bridge and broker namespace), runs `body`, and tears the lab down, awaited,
    /// however `body` ends. Stop the processes in the namespaces before `body` returns.
    static func with<Result>(_ body: (NetworkLab) async throws -> Result) async throws -> Result {
        let lab = try await make()
        return try await withCleanUp(of: lab, { await $0.tearDown() }, body)
    }

    private static func make() async throws -> NetworkLab {
        await deleteLeftovers()
        let sequence = sequence.withLock { $0 += 1; return $0 }
        let prefix = namePrefix(sequence: sequence)
        active.withLock { _ = $0.insert(prefix) }
        let subnet = try await freeSubnet(seed: Int(getpid()) &* 31 &+ sequence)
        let broker = Host(
            namespace: prefix + "b", link: prefix + "bh", address: subnet + ".1",
            launcher: [ip ?? "ip", "netns", "exec", prefix + "b"])
        let lab = NetworkLab(prefix: prefix, subnet: subnet, brokerHost: broker)
        do {
            try await run(["link", "add", lab.bridge, "type", "bridge"])
            try await run(["addr", "add", subnet + ".254/24", "dev", lab.bridge])
            try await run(["link", "set", lab.bridge, "up"])
            try await lab.join(broker, inner: prefix + "bn")
        } catch {
            await lab.tearDown()
            throw error
        }
        return lab
    }

    /// Adds a namespace named `prefix` + `role` (a few characters) on the bridge.
    func addHost(_ role: String) async throws -> Host {
        let number = nextHost.withLock { $0 += 1; return $0 - 1 }
        let host = Host(
            namespace: prefix + role, link: prefix + role + "h", address: "\(subnet).\(number)",
            launcher: [Self.ip ?? "ip", "netns", "exec", prefix + role])
        try await join(host, inner: prefix + role + "n")
        return host
    }

    /// Makes `host`'s namespace and veth pair, the outer end on the bridge, the inner one with
    /// the host's address; loopback up too (a worker's operations server listens there).
    private func join(_ host: Host, inner: String) async throws {
        hosts.withLock { $0.append(host) }
        try await Self.run(["netns", "add", host.namespace])
        try await Self.run(["link", "add", host.link, "type", "veth", "peer", "name", inner])
        try await Self.run(["link", "set", inner, "netns", host.namespace])
        try await Self.run(["link", "set", host.link, "master", bridge])
        try await Self.run(["link", "set", host.link, "up"])
        try await Self.run(["-n", host.namespace, "link", "set", "lo", "up"])
        try await Self.run(["-n", host.namespace, "addr", "add", host.address + "/24", "dev", inner])
        try await Self.run(["-n", host.namespace, "link", "set", inner, "up"])
    }

    /// Takes `host`'s link down (cut off: nothing it sends arrives, nothing reaches it) or up.
    func setLink(_ host: Host, up: Bool) async throws {
        try await Self.run(["link", "set", host.link, up ? "up" : "down"])
    }

    /// Deletes the namespaces, links and bridge (the processes in them should be gone: a
    /// namespace lives on, unnamed, while a process is in it).
    func tearDown() async {
        for host in hosts.withLock({ $0 }) {
            _ = try? await Self.run(["link", "delete", host.link])
            _ = try? await Self.run(["netns", "delete", host.namespace])
        }
        _ = try? await Self.run(["link", "delete", bridge])
        Self.active.withLock { _ = $0.remove(prefix) }
    }

    /// Deletes the namespaces and links of labs whose test process is gone (it died before its
    /// clean-up), and those of this process's labs no longer set up.
    private static func deleteLeftovers() async {
        let namespaces = (try? await output(["netns", "list"]))?.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) } ?? []
        // `ip -o link` lines: "12: NAME@PEER: <...>" or "12: NAME: <...>".
        let links = (try? await output(["-o", "link", "show"]))?.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: ":", maxSplits: 2)
            guard fields.count >= 2 else { return nil }
            return String(fields[1].trimmingCharacters(in: .whitespaces).split(separator: "@").first ?? "")
        } ?? []
        let active = active.withLock { $0 }
        func isLeftover(_ name: String) -> Bool {
            guard name.hasPrefix("nf"), let separator = name.firstIndex(of: "_"),
                let pid = Int32(name[name.index(name.startIndex, offsetBy: 2)..<separator], radix: 36)
            else { return false }
            if pid == getpid() { return !active.contains { name.hasPrefix($0) } }
            return kill(pid, 0) != 0 && errno == ESRCH
        }
        for link in links where isLeftover(link) { _ = try? await run(["link", "delete", link]) }
        for namespace in namespaces where isLeftover(namespace) { _ = try? await run(["netns", "delete", namespace]) }
    }

    /// A /24 in 10.213.0.0/16 that no address here is in yet.
    private static func freeSubnet(seed: Int) async throws -> String {
        let addresses = try await output(["-4", "-o", "addr", "show"])
        for attempt in 0..<200 {
            let candidate = "10.213.\(20 + (seed + attempt) % 200)"
            if !addresses.contains(" " + candidate + ".") { return candidate }
        }
        throw Failure(description: "no free /24 in 10.213.0.0/16")
    }

    /// An `ip` command failed.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `ip` with `arguments`, failing unless it exits 0.
    @discardableResult
    private static func run(_ arguments: [String]) async throws -> String {
        guard let ip else { throw Failure(description: "ip (iproute2) is not installed") }
        let exit = try await ChildProcess.run(ip, arguments, limit: .seconds(30))
        guard exit.exitedNormally, exit.status == 0 else {
            throw Failure(description: "ip \(arguments.joined(separator: " ")) exited with status \(exit.status)")
        }
        return exit.output
    }

    private static func output(_ arguments: [String]) async throws -> String {
        try await run(arguments)
    }
}
