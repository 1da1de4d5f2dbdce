public import Records
import Synchronization

/// The offsets a group member committed itself, per partition: where an assignment of one of
/// them starts at the least, whatever the group's coordinator answers.
///
/// A partition assigned starts at the group's committed offset, which the coordinator answers.
/// Kafka answers `UNSTABLE_OFFSET_COMMIT` while a transaction holds that partition's offsets back
/// (librdkafka then asks again). Tansu 0.6.0 answers the offset before them instead: there a
/// transaction's offsets commit only once every older transaction that wrote to one of its
/// partitions has ended (docs/faults.md, "Tansu's transactions", 3). A worker whose commits a
/// frozen worker's open transaction held back, given its partitions again at that worker's
/// return, would start below its own commits and write their records' outputs a second time.
///
/// Starting from the higher of the two is never a record too far: every owner of a partition
/// starts where the one before it committed, so no commit of it can be lower than one made
/// before it. Only a member's own commits count (they are known to have succeeded), kept for the
/// process's life: one offset per partition, bounded by the partitions the group consumes.
///
/// A start raised so is also a commit to make again (``takeRaisedStarts(among:)``): the group's
/// offset stays at the coordinator's answer until the member commits that partition once more,
/// which a worker otherwise does only after its next record there. On Tansu the answer can stay
/// low for good: it settles held-back transactions together and may store an older commit last
/// (`TransactionTests` reproduces it; the likely reading of a `PausedWorkerFaultTests` run in CI,
/// where worker-a started the zombie's six partitions from its own commits, read nothing more
/// there, and their lag never reached 0).
public final class CommittedFloor: Sendable {
    private struct State {
        /// The member's own last commit of each partition.
        var offsets: [TopicPartition: Int64] = [:]
        /// Partitions of the latest assignment that started from the floor, above the group's
        /// answer: where each started.
        var raisedStarts: [TopicPartition: Int64] = [:]
    }

    private let state = Mutex(State())

    /// An empty floor: nothing committed yet.
    public init() {}

    /// Notes `committed` (each the next offset to read) as committed by this member.
    public func raise(_ committed: [TopicPartitionOffset]) {
        state.withLock { state in
            for offset in committed where offset.offset >= 0 {
                state.offsets[offset.topicPartition] = max(state.offsets[offset.topicPartition] ?? offset.offset, offset.offset)
            }
        }
    }

    /// This member's own commits among `partitions`.
    public func offsets(of partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        state.withLock { state in
            var found: [TopicPartition: Int64] = [:]
            for partition in partitions {
                if let offset = state.offsets[partition] { found[partition] = offset }
            }
            return found
        }
    }

    /// Notes where the partitions of an assignment start: `raised` holds those started from the
    /// floor, above the group's answer; the rest of `assigned` start where the group says, and
    /// forget any raised start an earlier assignment of theirs left untaken (committing it again
    /// now could move the group's offset back below another member's later commit).
    public func noteStarts(of assigned: [TopicPartition], raised: [TopicPartition: Int64]) {
        state.withLock { state in
            for partition in assigned { state.raisedStarts[partition] = raised[partition] }
        }
    }

    /// The raised starts among `assigned` (each the next offset to read), taken: the owner of the
    /// assignment commits each once more, so that the group's committed offset catches up with
    /// the member's own commit.
    public func takeRaisedStarts(among assigned: [TopicPartition]) -> [TopicPartitionOffset] {
        state.withLock { state in
            assigned.compactMap { partition in
                state.raisedStarts.removeValue(forKey: partition).map {
                    TopicPartitionOffset(topic: partition.topic, partition: partition.partition, offset: $0)
                }
            }
        }
    }
}
