import Foundation
import JSON
import Records

/// The partitions a broker started a new owner below a commit it had acknowledged, read from the
/// workers' logs (at `LOG_LEVEL=debug`): each commit of an exactly-once transaction
/// (`exactly-once: transaction committed`, the offsets sent with it) and each restore
/// (`state restored`, the offsets the assignment started from, and how long it took).
///
/// Tansu 0.6.0 answers an offset fetch with what it has stored, and stores a transaction's
/// offsets only once every transaction overlapping its produced ranges has ended; a killed
/// worker's transaction ends only at its restart (docs/testing.md, "Failures seen in CI"). Until
/// then a new owner is given offsets older than commits that succeeded, and processes their
/// records again: duplicates under exactly-once that the broker made, not the worker. Kafka
/// answers `UNSTABLE_OFFSET_COMMIT` instead, and librdkafka asks again.
///
/// A test excuses a record processed twice only when its input record lies in such a gap: the
/// restore that started its partition began at or below the record's offset, after a commit that
/// had acknowledged an offset beyond it. A worker that failed to commit a record's offset shows
/// no such commit, and is not excused.
///
/// A worker killed while its commit was on its way logged what it was committing
/// (`exactly-once: committing a transaction`) and no acknowledgement. Unless the records the kill
/// left open ended aborted (then that commit never happened), the test passes the killed worker
/// (``KilledCommit``): that commit's offsets count as acknowledged when the worker died. Its
/// outputs are visible to `read_committed` readers; Tansu may still hold its offsets back, for
/// good while the worker is down (docs/testing.md).
struct OffsetRegressions: CustomStringConvertible {
    /// A worker killed with its commit on its way, which the broker may have completed.
    struct KilledCommit {
        var worker: String
        /// When the process had exited: every line before it is the killed process's.
        var exited: Date
    }

    /// One partition started below an acknowledged commit.
    struct Regression: CustomStringConvertible {
        var partition: TopicPartition
        /// Where the restore started the partition.
        var answered: Int64
        /// The highest offset a commit before the restore acknowledged.
        var acknowledged: Int64
        /// Who restored, and who had committed.
        var restoredBy: String
        var committedBy: String

        var description: String {
            "\(partition) started at \(answered) by \(restoredBy), after \(committedBy)'s commit of \(acknowledged)"
        }
    }

    private(set) var regressions: [Regression] = []

    /// A restore: who made it, when it fetched the committed offsets, and where it started each partition.
    struct Restore: CustomStringConvertible {
        var worker: String
        var fetched: Date
        var offsets: [TopicPartition: Int64]

        var description: String { "\(worker)'s restore of \(fetched)" }
    }

    /// Every restore read, in the logs' order.
    private(set) var restores: [Restore] = []
    /// The commits and restores read: a test that relies on the excuse checks that its workers
    /// logged them (at debug), or it would excuse nothing for want of reading.
    private(set) var commitsRead = 0
    var restoresRead: Int { restores.count }

    /// Reads the logs of `workers` (name → the log's text); `killed`, the worker whose commit
    /// was on its way when it was killed, and was completed.
    init(logs workers: [String: String], killed: KilledCommit? = nil) {
        var commits: [(worker: String, at: Date, offsets: [TopicPartition: Int64])] = []
        var restores: [Restore] = []
        for (worker, log) in workers {
            // The killed process's last commit: what it sent, unless an acknowledgement followed.
            var onItsWay: [TopicPartition: Int64]?
            for line in log.split(separator: "\n")
            where line.contains("transaction committed") || line.contains("committing a transaction") || line.contains("state restored") {
                guard let entry = try? JSONValue(parsing: Array(line.utf8)).objectValue,
                    case .string(let message)? = entry["message"], case .string(let time)? = entry["timestamp"],
                    let at = Self.date(time), let metadata = entry["metadata"]?.objectValue,
                    case .string(let list)? = metadata["kafka.offsets"]
                else { continue }
                let offsets = Self.offsets(list)
                let beforeTheKill = killed.map { $0.worker == worker && at < $0.exited } ?? false
                if message == "exactly-once: transaction committed" {
                    commits.append((worker, at, offsets))
                    if beforeTheKill { onItsWay = nil }
                } else if message == "exactly-once: committing a transaction" {
                    if beforeTheKill { onItsWay = offsets }
                } else if message == "state restored" {
                    // The offsets were fetched before the restore ran: its line comes after it.
                    restores.append(Restore(worker: worker, fetched: at.addingTimeInterval(-Self.seconds(metadata["took"])), offsets: offsets))
                }
            }
            if let killed, let onItsWay {
                commits.append(("\(worker) (on its way when it was killed)", killed.exited, onItsWay))
            }
        }
        commitsRead = commits.count
        self.restores = restores
        for restore in restores {
            for (partition, answered) in restore.offsets {
                let earlier = commits.filter { $0.at < restore.fetched }.compactMap { commit in
                    commit.offsets[partition].map { (commit.worker, $0) }
                }
                guard let highest = earlier.max(by: { $0.1 < $1.1 }), highest.1 > answered else { continue }
                regressions.append(
                    Regression(partition: partition, answered: answered, acknowledged: highest.1, restoredBy: restore.worker, committedBy: highest.0))
            }
        }
    }

    /// The regression under which the record at `position` was read again, if any.
    func covering(_ position: TopicPartitionOffset) -> Regression? {
        regressions.first { regression in
            regression.partition == position.topicPartition && regression.answered <= position.offset
                && position.offset < regression.acknowledged
        }
    }

    /// A restore that fetched its offsets after `moment` and started `position`'s partition at or
    /// below it, if any: under it the record was read again. Evidence of a regression only where
    /// the record is known to have been committed before (by a transaction whose acknowledgement
    /// no log line holds: the killed worker's, completed after the kill).
    func restore(after moment: Date, startingAtOrBelow position: TopicPartitionOffset) -> Restore? {
        restores.first { restore in
            restore.fetched > moment && restore.offsets[position.topicPartition].map { $0 <= position.offset } == true
        }
    }

    var description: String {
        regressions.isEmpty ? "none" : regressions.map(\.description).joined(separator: "; ")
    }

    /// `topic[partition]@offset,...`, as the worker logs offsets.
    static func offsets(_ list: String) -> [TopicPartition: Int64] {
        var offsets: [TopicPartition: Int64] = [:]
        for item in list.split(separator: ",") {
            guard let at = item.lastIndex(of: "@"), let open = item.lastIndex(of: "["), let offset = Int64(item[item.index(after: at)...]),
                let partition = Int32(item[item.index(after: open)..<item.index(before: at)])
            else { continue }
            offsets[TopicPartition(topic: String(item[..<open]), partition: partition)] = offset
        }
        return offsets
    }

    /// A log line's ISO 8601 time, milliseconds included.
    private static func date(_ text: String) -> Date? {
        try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// A duration as swift's `Duration` prints it ("0.814153809 seconds"); 0 when unreadable.
    private static func seconds(_ value: JSONValue?) -> TimeInterval {
        guard case .string(let text)? = value, let number = text.split(separator: " ").first else { return 0 }
        return TimeInterval(number) ?? 0
    }
}
