import Foundation
import Kafka
import Records
import Synchronization
import TestSupport
import Testing

/// The workers of a fault test, run as a deployment's supervisor runs them: each under a name
/// (its `metrics.workerId`, so under exactly-once its transactional id), optionally in a network
/// namespace, started again under the same name when it exits by itself (``restartExited()``),
/// each restart counted with the reason the worker logged. What a worker holds is read from its
/// log since its current process started, so a restart's log (appended to the same file) is
/// never mistaken for its predecessor's.
final class FaultGroup: Sendable {
    /// One member: how it is started, where its current process's log begins, what ended the others.
    private struct Member {
        var launcher: [String]
        var process: ChildProcess
        /// The length of the log file when the current process started.
        var logStart: Int
        /// One line per exit the supervisor met: status and the worker's last critical line.
        var exits: [String] = []
    }

    let pipeline: Pipeline
    private let members = Mutex<[String: Member]>([:])
    /// What the last ``watchingCommitted(_:)`` read: per partition, each committed offset that
    /// differed from the one before, with when it was read.
    private let committedChanges = Mutex<[Int32: [(at: Date, offset: Int64)]]>([:])
    /// Whether exited workers are started again (off while the test stops them on purpose).
    private let supervising = Mutex(true)
    /// When the fault began, for saying how long after it a worker exited.
    private let faultBegan = Mutex<ContinuousClock.Instant?>(nil)

    init(pipeline: Pipeline) {
        self.pipeline = pipeline
    }

    /// The names of the members, sorted.
    var names: [String] { members.withLock { $0.keys.sorted() } }

    /// Starts worker `name`, in a namespace when `launcher` says so (`ip netns exec NAME`).
    func start(_ name: String, launcher: [String] = []) throws {
        let logStart = pipeline.log(of: name).utf8.count
        let process = try pipeline.startWorker(name, launcher: launcher)
        members.withLock { $0[name] = Member(launcher: launcher, process: process, logStart: logStart) }
    }

    /// The current process of `name`.
    func process(_ name: String) -> ChildProcess? {
        members.withLock { $0[name]?.process }
    }

    /// What `name`'s current process logged so far.
    func currentLog(_ name: String) -> Substring {
        let start = members.withLock { $0[name]?.logStart } ?? 0
        let log = pipeline.log(of: name)
        return Substring(log.utf8.dropFirst(start))
    }

    /// Starts again, under its name and in its namespace, every member whose process exited, as a
    /// supervisor (a Kubernetes Deployment) does; each exit is kept with the reason the worker
    /// logged (its last `critical` line).
    /// - Returns: the exits met now.
    @discardableResult
    func restartExited() throws -> [String] {
        guard supervising.withLock({ $0 }) else { return [] }
        var met: [String] = []
        for name in names {
            guard let member = members.withLock({ $0[name] }), member.process.hasExited else { continue }
            let reason = Self.lastLine(containing: #""level":"critical""#, in: currentLog(name)).map(Self.message) ?? "no critical line"
            let after = faultBegan.withLock { $0 }.map { " \(PausedWorkerFaultTests.seconds(.now - $0)) s after the fault began" } ?? ""
            let exit = "\(name) exited\(after) (\(reason)); started again"
            met.append(exit)
            try start(name, launcher: member.launcher)
            members.withLock { $0[name]?.exits = member.exits + [exit] }
        }
        return met
    }

    /// Lets a fault last until `deadline` (its length is what a test sets: nothing to await but the
    /// clock), restarting members that exit meanwhile.
    func supervise(until deadline: ContinuousClock.Instant) async throws {
        while ContinuousClock.now < deadline {
            try restartExited()
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Every exit met and restarted, over all members.
    var exits: [String] { members.withLock { $0.values.flatMap(\.exits) } }

    /// How many times members were started again.
    var restarts: Int { exits.count }

    /// Notes that the fault begins now: exits are then said to be so long after it.
    func noteFaultBegins() {
        faultBegan.withLock { $0 = .now }
    }

    /// Stops restarting members that exit.
    func stopSupervising() {
        supervising.withLock { $0 = false }
    }

    /// The requests partitions `name` holds now: those of its latest assignment, or nil when its
    /// process exited, has not been assigned partitions yet, or its latest word on them was a
    /// revocation or a loss.
    func heldPartitions(_ name: String) -> Set<Int32>? {
        guard let process = process(name), !process.hasExited else { return nil }
        let events = currentLog(name).split(separator: "\n").filter {
            $0.contains(#""message":"partitions assigned""#) || $0.contains(#""message":"partitions revoked""#)
                || $0.contains(#""message":"partitions lost""#)
        }
        guard let last = events.last, last.contains(#""message":"partitions assigned""#) else { return nil }
        return Self.requestsPartitions(in: last)
    }

    /// Whether the group is whole: every member holds partitions, and together they hold each
    /// partition of the requests topic once.
    func isWhole(partitions: Int32) -> Bool {
        var held: [Int32] = []
        for name in names {
            guard let partitions = heldPartitions(name) else { return false }
            held += partitions
        }
        return held.sorted() == Array(0..<partitions)
    }

    /// How many non-empty assignments `name` logged in all its processes.
    func assignments(_ name: String) -> Int {
        RealBrokerTests.assignments([name], in: pipeline)
    }

    /// Waits until the group is whole and has committed the requests topic to `ends` (lag 0),
    /// restarting members that exit meanwhile; returns how long that took from `since`.
    func waitUntilRecovered(ends: [Int32: Int64], since: ContinuousClock.Instant, limit: Duration = .seconds(180)) async throws -> Duration {
        let pipeline = pipeline
        let lastCheck = Mutex(ContinuousClock.now - .seconds(1))
        do {
            try await eventually("the group whole and its lag 0", limit: limit) {
                try self.restartExited()
                guard self.isWhole(partitions: pipeline.partitions) else { return false }
                // Each reading of the committed offsets is a client of its own: a few a second.
                guard lastCheck.withLock({ ContinuousClock.now - $0 >= .milliseconds(250) }) else { return false }
                lastCheck.withLock { $0 = ContinuousClock.now }
                let committed = (try? await pipeline.committedOffsets(of: Pipeline.requests)) ?? [:]
                return committed.filter { ends[$0.key] != nil } == ends
            }
        } catch {
            let committed = (try? await pipeline.committedOffsets(of: Pipeline.requests)) ?? [:]
            let held = names.map { "\($0): \(heldPartitions($0).map { $0.sorted().description } ?? "none")" }
            let state = "held \(held), committed \(committed.sorted { $0.key < $1.key }), ends \(ends.sorted { $0.key < $1.key })"
            Issue.record("not recovered: \(state); exits \(exits)\n\(logTails())")
            throw error
        }
        return ContinuousClock.now - since
    }

    /// Waits until the group has committed the requests topic to `ends`, restarting members that
    /// exit meanwhile (whether or not the group is whole: the members left took the work over).
    func waitUntilCommitted(_ ends: [Int32: Int64], limit: Duration = .seconds(180)) async throws {
        let pipeline = pipeline
        do {
            try await eventually("the requests committed to their ends", limit: limit) {
                try self.restartExited()
                try await Task.sleep(for: .milliseconds(200))
                let committed = (try? await pipeline.committedOffsets(of: Pipeline.requests)) ?? [:]
                return committed.filter { ends[$0.key] != nil } == ends
            }
        } catch {
            let committed = (try? await pipeline.committedOffsets(of: Pipeline.requests)) ?? [:]
            Issue.record("not committed: \(committed.sorted { $0.key < $1.key }), ends \(ends.sorted { $0.key < $1.key }); \(logTails())")
            throw error
        }
    }

    /// The last lines each member logged (messages and errors), for failure messages.
    func logTails(lines: Int = 25) -> String {
        names.map { name in
            let tail = currentLog(name).split(separator: "\n").suffix(lines).map { line in
                "  \(Self.time(of: line)) \(Self.message(of: line).prefix(300))"
            }
            return "\(name):\n" + tail.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// A log line's time, to the millisecond (empty when it has none).
    static func time(of line: Substring) -> String {
        line.range(of: #""timestamp":""#).map { String(line[$0.upperBound...].prefix(23)) } ?? ""
    }

    /// What each member logged, over all its processes, as distinct lines: a line whose message differs
    /// from an earlier one's only in its numbers (a reconnection attempt, a retried check) is
    /// shown once, where it first came, with how many times it came. A worker cut off repeats a
    /// few lines for minutes; a tail of its log shows only those, a digest shows how it got there.
    /// - Returns: at most `lines` distinct lines per member, the latest.
    func logDigests(lines: Int = 80) -> String {
        names.map { name in
            var order: [String] = []
            var seen: [String: (first: String, count: Int)] = [:]
            for line in pipeline.log(of: name).split(separator: "\n") {
                let message = String(Self.message(of: line).prefix(300))
                let shape = String(message.filter { !$0.isNumber })
                if let known = seen[shape] {
                    seen[shape] = (known.first, known.count + 1)
                    continue
                }
                seen[shape] = ("\(Self.time(of: line)) \(message)", 1)
                order.append(shape)
            }
            let digest = order.suffix(lines).map { shape in
                let (first, count) = seen[shape]!
                return "  \(first)" + (count > 1 ? " (×\(count))" : "")
            }
            let state = process(name)?.hasExited == true ? "exited" : "running"
            return "\(name) (\(state); exits met: \(members.withLock { $0[name]?.exits.count ?? 0 })):\n" + digest.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Runs `body` while reading the group's committed offsets of the requests topic a few times
    /// a second, and returns what `body` returned with the lowest offset read for each partition:
    /// a commit that moved a partition back (a zombie's transaction committed over its
    /// successor's work) shows there, since it stays until the partition's next owner has
    /// processed its records again.
    func watchingCommitted<Result: Sendable>(
        _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> (result: Result, lowest: [Int32: Int64]) {
        let pipeline = pipeline
        let watch = CommittedWatch()
        let result = try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask {
                while !watch.done.withLock({ $0 }) {
                    if let committed = try? await pipeline.committedOffsets(of: Pipeline.requests) {
                        watch.lowest.withLock { lowest in
                            for (partition, offset) in committed where offset >= 0 {
                                lowest[partition] = min(lowest[partition] ?? offset, offset)
                            }
                        }
                        let now = Date()
                        watch.changes.withLock { changes in
                            for (partition, offset) in committed where changes[partition]?.last?.offset != offset {
                                changes[partition, default: []].append((now, offset))
                            }
                        }
                    }
                    try await Task.sleep(for: .milliseconds(150))
                }
                return nil
            }
            group.addTask {
                defer { watch.done.withLock { $0 = true } }
                return try await body()
            }
            var result: Result?
            for try await value in group where value != nil { result = value }
            return result!
        }
        committedChanges.withLock { $0 = watch.changes.withLock { $0 } }
        return (result, watch.lowest.withLock { $0 })
    }

    /// The committed offsets the last ``watchingCommitted(_:)`` read, each partition's changes
    /// in turn (`offset@ms`, when it was read: ``FailurePlaces/millisecond(_:)``), for a
    /// failure's message: a partition
    /// that stayed below its end, or moved back, was started from there by its next owner.
    func committedHistory() -> String {
        committedChanges.withLock { changes in
            changes.keys.sorted().map { partition in
                "\(partition): " + changes[partition]!.map { "\($0.offset)@\(FailurePlaces.millisecond($0.at))" }.joined(separator: " ")
            }.joined(separator: "; ")
        }
    }

    /// What ``watchingCommitted(_:)``'s reader shares with it.
    private final class CommittedWatch: Sendable {
        /// The lowest committed offset read per partition.
        let lowest = Mutex<[Int32: Int64]>([:])
        /// Each partition's committed offsets as they changed, with when they were read.
        let changes = Mutex<[Int32: [(at: Date, offset: Int64)]]>([:])
        /// Set when the body ended: the reader stops.
        let done = Mutex(false)
    }

    /// Sends SIGTERM to every member, which must exit 0 (commit, leave the group).
    func stopGracefully() async throws {
        stopSupervising()
        for name in names {
            let worker = try #require(process(name))
            worker.send(signal: SIGTERM)
            let exit = try await worker.waitForExit(limit: .seconds(60))
            #expect(exit.exitedNormally && exit.status == 0, "\(name) log: \(currentLog(name).suffix(2_000))")
        }
    }

    /// The partitions of the requests topic named in a log line's `kafka.partitions`.
    static func requestsPartitions(in line: Substring) -> Set<Int32> {
        var partitions: Set<Int32> = []
        var rest = line[...]
        let marker = Pipeline.requests + "["
        while let range = rest.range(of: marker) {
            rest = rest[range.upperBound...]
            if let close = rest.firstIndex(of: "]"), let partition = Int32(rest[..<close]) { partitions.insert(partition) }
        }
        return partitions
    }

    /// When `name` first logged, after `offset` bytes of its log file, a line containing one of `texts`.
    func firstTime(_ name: String, after offset: Int, of texts: [String]) -> Date? {
        let log = Substring(pipeline.log(of: name).utf8.dropFirst(offset))
        guard let line = log.split(separator: "\n").first(where: { line in texts.contains { line.contains($0) } }),
            let range = line.range(of: #""timestamp":""#)
        else { return nil }
        let text = line[range.upperBound...].prefix { $0 != "\"" }
        return try? Date(String(text), strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// The last line of `log` containing `text`.
    static func lastLine(containing text: String, in log: Substring) -> Substring? {
        log.split(separator: "\n").last { $0.contains(text) }
    }

    /// A JSON log line's message and error, for a figure line.
    static func message(of line: Substring) -> String {
        func field(_ name: String) -> String? {
            guard let range = line.range(of: "\"\(name)\":\"") else { return nil }
            let rest = line[range.upperBound...]
            var value = ""
            var escaped = false
            for character in rest {
                if escaped {
                    value.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    break
                } else {
                    value.append(character)
                }
            }
            return value
        }
        let text = [field("message"), field("error")].compactMap { $0 }.joined(separator: ": ")
        // Lists of partitions run to hundreds of characters: a figure line says there was one.
        return text.replacing(/\([^()]{80,}\)/, with: "(…)")
    }
}
