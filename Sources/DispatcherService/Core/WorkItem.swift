import Dispatcher
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
    /// - Parameter bytes: what it holds for flow control, as admitted (``bytes(of:)`` by default).
    init(message: KafkaMessage, epoch: UInt64, generation: UInt32, orderingKey: OrderingKey?, bytes: Int? = nil) {
        self.message = message
        self.epoch = epoch
        self.generation = generation
        self.orderingKey = orderingKey
        self.bytes = bytes ?? Self.bytes(of: message)
    }

    /// What a message holds for flow control.
    static func bytes(of message: KafkaMessage) -> Int {
        var headerBytes = 0
        for header in message.headers { headerBytes += header.name.utf8.count + (header.value?.count ?? 0) }
        return bytes(key: message.key?.count ?? 0, value: message.value?.count ?? 0, headerBytes: headerBytes, headers: message.headers.count)
    }

    /// What a record of these sizes holds for flow control: its key, value and headers, each
    /// header with ``headerOverhead``.
    static func bytes(key: Int, value: Int, headerBytes: Int, headers: Int) -> Int {
        key + value + headerBytes + headers * headerOverhead
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
/// A key is the hash of the partition and the token, nothing else: it is made from the token's
/// bytes where they lie (a record decided in place has no copy of them), and a record in flight
/// keeps no reference for it. Two tokens whose hashes collide (64 bits, seeded per process) are
/// ordered after each other too: a rare wait, never a wrong order.
struct OrderingKey: Hashable, Sendable {
    /// The hash of the partition and the token (or of the partition alone).
    private let value: Int

    private init(value: Int) {
        self.value = value
    }

    /// The hasher of keys of `partition`: each record's key continues it with its token.
    static func hasher(of partition: TopicPartition) -> Hasher {
        var hasher = Hasher()
        hasher.combine(partition)
        return hasher
    }

    /// Same device token in the same partition (`ordering: key`, the default): the key of the
    /// token `bytes` (nil for a null key), continuing the partition's ``hasher(of:)``.
    static func device(_ partition: Hasher, token bytes: UnsafeRawBufferPointer?) -> OrderingKey {
        var hasher = partition
        let token = bytes ?? UnsafeRawBufferPointer(start: nil, count: 0)
        hasher.combine(token.count)
        // The bytes in one call: fed one at a time (as the synthesised conformance does), they
        // showed in the worker's profile.
        hasher.combine(bytes: token)
        return OrderingKey(value: hasher.finalize())
    }

    /// Same partition: `ordering: partition`.
    static func partition(_ partition: TopicPartition) -> OrderingKey {
        var hasher = hasher(of: partition)
        hasher.combine(-1 as Int)
        return OrderingKey(value: hasher.finalize())
    }
}

/// Which records wait for which (`dispatch.ordering`), as a value: the worker makes each
/// record's key with it before taking the core's lock.
struct OrderingPolicy: Sendable {
    /// `dispatch.ordering`.
    let mode: OrderingMode
    /// Topics whose records order with another topic's of the same partition number, because
    /// they change the same state (docs/worker.md, "Partitioned state"): the devices and
    /// activity-repartition topics with the requests topic.
    let sharedOrdering: [String: String]

    init(mode: OrderingMode, sharedOrdering: [String: String] = [:]) {
        self.mode = mode
        self.sharedOrdering = sharedOrdering
    }

    /// The partition whose keys a record of `partition` orders with.
    func orderingPartition(of partition: TopicPartition) -> TopicPartition {
        guard !sharedOrdering.isEmpty, let topic = sharedOrdering[partition.topic] else { return partition }
        return TopicPartition(topic: topic, partition: partition.partition)
    }

    /// The hasher a key of `partition` continues (``OrderingKey/device(_:token:)``), made once
    /// for a run of records of one partition; nil when ordering is not by key.
    func keyHasher(of partition: TopicPartition) -> Hasher? {
        mode == .key ? OrderingKey.hasher(of: orderingPartition(of: partition)) : nil
    }

    /// The key of a record of `partition` whose key is `token` (nil: Kafka's null key).
    func key(of partition: TopicPartition, token: UnsafeRawBufferPointer?) -> OrderingKey? {
        switch mode {
        case .key: .device(OrderingKey.hasher(of: orderingPartition(of: partition)), token: token)
        case .partition: .partition(orderingPartition(of: partition))
        case .unordered: nil
        }
    }

    /// The key of a record of `partition` when a run of its records shares `hasher` (from
    /// ``keyHasher(of:)``).
    func key(of partition: TopicPartition, hasher: Hasher?, token: UnsafeRawBufferPointer?) -> OrderingKey? {
        switch mode {
        case .key: .device(hasher ?? OrderingKey.hasher(of: orderingPartition(of: partition)), token: token)
        case .partition: .partition(orderingPartition(of: partition))
        case .unordered: nil
        }
    }
}
