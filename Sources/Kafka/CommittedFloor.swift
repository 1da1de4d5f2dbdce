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
public final class CommittedFloor: Sendable {
    private let offsets = Mutex<[TopicPartition: Int64]>([:])

    /// An empty floor: nothing committed yet.
    public init() {}

    /// Notes `committed` (each the next offset to read) as committed by this member.
    public func raise(_ committed: [TopicPartitionOffset]) {
        offsets.withLock { offsets in
            for offset in committed where offset.offset >= 0 {
                offsets[offset.topicPartition] = max(offsets[offset.topicPartition] ?? offset.offset, offset.offset)
            }
        }
    }

    /// This member's own commits among `partitions`.
    public func offsets(of partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        offsets.withLock { offsets in
            var found: [TopicPartition: Int64] = [:]
            for partition in partitions {
                if let offset = offsets[partition] { found[partition] = offset }
            }
            return found
        }
    }
}
