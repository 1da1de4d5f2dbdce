import Kafka
import Records

/// One consumed record, a request or a response, on its way through the worker.
///
/// A class, immutable: a record passes through the core's queues, batches, the decided and
/// published arrays and an extension's completion, and a copy of a reference costs one retain
/// where a copy of the message inline retained its topic, key, value and headers each time.
final class WorkItem: Sendable {
    /// The record as consumed.
    let message: KafkaMessage
    /// The assignment epoch of its partition when it was consumed: results of an older epoch
    /// belong to an assignment that is gone and are dropped.
    let epoch: UInt64
    /// The generation of its partition's offsets when it was consumed (``WorkerCore/Partition/generation``).
    let generation: UInt32
    /// The key that orders it after earlier records, or `nil` when it may run at once.
    let orderingKey: OrderingKey?

    /// The partition it came from.
    var partition: TopicPartition { TopicPartition(topic: message.topic, partition: message.partition) }

    /// The memory it holds while in flight, for flow control: key, value and headers (names,
    /// values, and the bookkeeping of each), all of which it keeps, and copies into webhook bodies
    /// and dead letters. Measured once: admission and finishing both read it.
    let bytes: Int

    /// A consumed record in the given assignment epoch and offset generation.
    init(message: KafkaMessage, epoch: UInt64, generation: UInt32, orderingKey: OrderingKey?) {
        self.message = message
        self.epoch = epoch
        self.generation = generation
        self.orderingKey = orderingKey
        var bytes = (message.value?.count ?? 0) + (message.key?.count ?? 0)
        for header in message.headers { bytes += header.name.utf8.count + (header.value?.count ?? 0) + Self.headerOverhead }
        self.bytes = bytes
    }

    /// What one header costs besides its bytes: its string and array.
    static let headerOverhead = 64
}

/// What orders records after one another (`dispatch.ordering`): the same device token in the
/// same partition (`ordering: key`, the default), or the same partition (`ordering: partition`).
///
/// Both carry the topic: the worker consumes requests and responses, whose partition numbers
/// collide, and a response must not wait behind a request of another device.
///
/// Hashed once, when made: the core looks every record's key up three times (its queue when it
/// is taken in, twice when it finishes), and hashing the topic and the token each time was about
/// 2 % of the gate-only path's CPU.
struct OrderingKey: Hashable, Sendable {
    /// The partition the key belongs to.
    let partition: TopicPartition
    /// The device token, or nil when the key is the partition.
    let token: RecordBytes?
    /// The hash of the partition and token, computed once.
    private let hash: Int

    private init(partition: TopicPartition, token: RecordBytes?) {
        self.partition = partition
        self.token = token
        var hasher = Hasher()
        hasher.combine(partition)
        if let token {
            hasher.combine(token.count)
            // The bytes in one call: fed one at a time (as the synthesised conformance does),
            // they showed in the worker's profile.
            token.withUnsafeBytes { hasher.combine(bytes: $0) }
        } else {
            hasher.combine(-1 as Int)
        }
        hash = hasher.finalize()
    }

    /// Same device token in the same partition: `ordering: key` (the default).
    static func device(_ partition: TopicPartition, token: RecordBytes) -> OrderingKey {
        OrderingKey(partition: partition, token: token)
    }

    /// Same partition: `ordering: partition`.
    static func partition(_ partition: TopicPartition) -> OrderingKey {
        OrderingKey(partition: partition, token: nil)
    }

    static func == (left: OrderingKey, right: OrderingKey) -> Bool {
        left.hash == right.hash && left.partition == right.partition && left.token == right.token
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }
}
