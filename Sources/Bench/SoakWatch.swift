import Dispatcher
import DispatcherService
import Foundation
import Kafka
import Records
import Synchronization

/// What `bench soak` follows while it runs, to know when the next phase may go: the `apns-id`s
/// that have an outcome (deliveries, dead letters), the activity tokens in the activities
/// changelog, and each worker's latest metrics snapshot. Under exactly-once it also reads the
/// output and state topics `read_uncommitted`, so that the records of open transactions are known
/// at any moment without reading the topics again (``openRecords()``).
final class SoakWatch: Sendable {
    /// A record written beyond the last stable offset when last looked at.
    struct OpenRecord: Sendable {
        var position: TopicPartitionOffset
        /// Its `apns-id` or, failing that, `apns-request-id` header.
        var id: String?
    }

    private struct Seen {
        var outcomes: Set<String> = []
        var activities: Set<String> = []
        var stored: Set<String> = []
        var snapshots: [String: MetricsSnapshot] = [:]
        /// Per partition: the end of what `read_committed` readers got, that is the last stable
        /// offset once they caught up.
        var committedEnds: [TopicPartition: Int64] = [:]
        /// Per partition, in offset order: every record `read_uncommitted` readers got.
        var written: [TopicPartition: [OpenRecord]] = [:]
    }

    private enum Role {
        case outcomes, activities, stored, metrics, forwarded, uncommitted
    }

    private let seen = Mutex(Seen())
    private let readers: [KafkaTopicReader]
    private let tasks: Mutex<[Task<Void, Never>]> = Mutex([])

    /// Starts reading the topics from their beginnings.
    init(bootstrap: String, topics: TopicSettings, exactlyOnce: Bool) throws {
        var committed = ConsumerConfiguration(bootstrapServers: bootstrap, groupID: "unused")
        committed.properties = ["fetch.wait.max.ms": "100"]
        var uncommitted = committed
        uncommitted.isolationLevel = .readUncommitted
        var roles: [(String, Role)] = [
            (topics.deliveries, .outcomes), (topics.deadLetter, .outcomes), (topics.activities, .activities), (topics.stored, .stored),
            (topics.metrics, .metrics),
        ]
        let transactional = [topics.deliveries, topics.deadLetter, topics.activities, topics.stored, topics.activityRepartition]
        if exactlyOnce { roles += [(topics.activityRepartition, .forwarded)] + transactional.map { ($0, .uncommitted) } }
        readers = try roles.map { name, role in
            try KafkaTopicReader(configuration: role == .uncommitted ? uncommitted : committed, topic: name, logger: SoakRun.logger)
        }
        for ((_, role), reader) in zip(roles, readers) {
            // A task per reader: each drains its reader's events until close() ends them.
            let task = Task {
                for await event in reader.events {
                    guard case .messages(let messages) = event else { continue }
                    self.seen.withLock { seen in
                        for message in messages { Self.note(message, as: role, in: &seen) }
                    }
                }
            }
            tasks.withLock { $0.append(task) }
        }
    }

    /// Notes what `message`, read by a reader in `role`, tells.
    private static func note(_ message: KafkaMessage, as role: Role, in seen: inout Seen) {
        let place = TopicPartition(topic: message.topic, partition: message.partition)
        if role == .uncommitted {
            seen.written[place, default: []].append(
                OpenRecord(position: message.position, id: message.headerText("apns-id") ?? message.headerText("apns-request-id")))
            return
        }
        if role != .metrics { seen.committedEnds[place] = max(seen.committedEnds[place] ?? 0, message.offset + 1) }
        switch role {
        case .outcomes:
            if let id = message.headerText("apns-id") { seen.outcomes.insert(id) }
        case .activities:
            if message.value != nil { seen.activities.insert(message.keyText) }
        case .stored:
            if let id = message.headerText("apns-id") { seen.stored.insert(id) }
        case .metrics:
            if let value = message.value, let snapshot = try? MetricsSnapshot(jsonBytes: Array(value)),
                seen.snapshots[snapshot.workerId].map({ $0.timestamp <= snapshot.timestamp }) ?? true
            {
                seen.snapshots[snapshot.workerId] = snapshot
            }
        case .forwarded, .uncommitted:
            break
        }
    }

    /// Exactly-once: the records written beyond the last stable offset as the readers see them
    /// now (open transactions, what follows them in their partitions, and what the
    /// `read_committed` readers have not caught up with yet).
    func openRecords() -> [OpenRecord] {
        seen.withLock { seen in
            seen.written.flatMap { place, records in
                let end = seen.committedEnds[place] ?? 0
                return records.reversed().prefix { $0.position.offset >= end }
            }
        }
    }

    /// Waits until every id of `ids` has an outcome.
    func waitForOutcomes(_ ids: Set<String>, limit: ContinuousClock.Instant, what: String) async throws {
        var lastReport = ContinuousClock.now
        while true {
            let missing = seen.withLock { ids.subtracting($0.outcomes).count }
            if missing == 0 { return }
            guard ContinuousClock.now < limit else { throw BenchError("\(what): \(missing) of \(ids.count) never came") }
            if ContinuousClock.now - lastReport > .seconds(30) {
                soakPrint("soak: waiting for \(what): \(missing) of \(ids.count) to go")
                lastReport = .now
            }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// Waits until every notification of `ids` is stored for its offline device or has an outcome
    /// (the one stored before it for the same device is superseded: APNs keeps one per device).
    func waitForStored(_ ids: Set<String>, limit: ContinuousClock.Instant) async throws {
        var lastReport = ContinuousClock.now
        while true {
            let missing = seen.withLock { ids.subtracting($0.outcomes).subtracting($0.stored).count }
            if missing == 0 { return }
            guard ContinuousClock.now < limit else { throw BenchError("stored notifications: \(missing) of \(ids.count) neither stored nor decided") }
            if ContinuousClock.now - lastReport > .seconds(30) {
                soakPrint("soak: waiting for the notifications to offline devices: \(missing) of \(ids.count) to go")
                lastReport = .now
            }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    /// Waits until the activities changelog holds `count` activities and every running worker's
    /// snapshot taken since then shows them all in its activity index (a worker started later
    /// reads the index to its end before it takes partitions).
    func waitForActivities(_ count: Int, runningWorkers: @Sendable () -> [String], limit: ContinuousClock.Instant) async throws {
        var complete: Date?
        while true {
            let (activities, snapshots) = seen.withLock { ($0.activities.count, $0.snapshots) }
            if complete == nil, activities >= count { complete = Date() }
            if let complete {
                let current = runningWorkers().compactMap { snapshots[$0] }.filter { $0.timestamp > complete }
                if !current.isEmpty, current.allSatisfy({ ($0.state?.activityIndex ?? 0) >= count }) { return }
            }
            guard ContinuousClock.now < limit else {
                throw BenchError("the activities: \(activities) of \(count) in the changelog, not in every worker's index in time")
            }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// Stops reading.
    func close() async {
        for reader in readers { await reader.close() }
        for task in tasks.withLock({ $0 }) { await task.value }
    }
}
