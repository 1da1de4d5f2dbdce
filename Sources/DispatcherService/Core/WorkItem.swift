import Dispatcher
import Foundation
import Kafka
import Records

/// One consumed record, a request or a response, on its way through the worker.
///
/// A class, immutable: a record passes through the core's queues, batches, the decided and
/// published arrays and an extension's completion, and a copy of a reference costs one retain
/// where a copy of the message inline retained its topic, key, value and headers each time.
final class WorkItem: Sendable {
    /// The record as consumed, in one of two forms.
    enum Content: Sendable {
        /// A message of its own, as the owned path reads it.
        case message(KafkaMessage)
        /// A request that waited behind its key, copied as its view reads it: decided on that
        /// view when its turn comes (most such requests), or made a message then if it goes
        /// the owned way.
        case copy(RecordCopy)
    }

    /// The record as consumed.
    let content: Content

    /// The record as a message of its own. Of a ``Content/copy(_:)``, a new one at each read:
    /// read it once (only the owned path reads it, and only from the few copies that go that way).
    var message: KafkaMessage {
        switch content {
        case .message(let message): message
        case .copy(let copy): KafkaMessage(copy)
        }
    }

    /// The topic it was read from.
    var topic: String {
        switch content {
        case .message(let message): message.topic
        case .copy(let copy): copy.topic
        }
    }

    /// Its offset.
    var offset: Int64 {
        switch content {
        case .message(let message): message.offset
        case .copy(let copy): copy.offset
        }
    }

    /// Its timestamp, when it has one.
    var timestamp: Date? {
        switch content {
        case .message(let message): message.timestamp
        case .copy(let copy): copy.timestampMilliseconds.map { Date(timeIntervalSince1970: Double($0) / 1_000) }
        }
    }

    /// The assignment epoch of its partition when it was consumed: results of an older epoch
    /// belong to an assignment that is gone and are dropped.
    let epoch: UInt64
    /// The generation of its partition's offsets when it was consumed (``WorkerCore/Partition/generation``).
    let generation: UInt32
    /// The key that orders it after earlier records, or `nil` when it may run at once.
    let orderingKey: OrderingKey?
    /// What the rules decided of a request before it waits, when it was decided on its view
    /// already: it goes on from there (``Dispatcher/proceed(_:record:tables:now:)``).
    let wait: RequestWait?
    /// Whether it is a request whose output failed on its view: it goes the owned way, where the
    /// publisher retries the output or writes its dead letter.
    let replaying: Bool

    /// Its partition's number and its offset, read together: one look at its content (a copy's
    /// header), and no topic name, whose string a ``TopicPartition`` would retain.
    var place: (partition: Int32, offset: Int64) {
        switch content {
        case .message(let message): (message.partition, message.offset)
        case .copy(let copy): (copy.partition, copy.offset)
        }
    }

    /// The partition it came from.
    var partition: TopicPartition {
        switch content {
        case .message(let message): TopicPartition(topic: message.topic, partition: message.partition)
        case .copy(let copy): TopicPartition(topic: copy.topic, partition: copy.partition)
        }
    }

    /// The memory it holds while in flight, for flow control: key, value and headers (names,
    /// values, and the bookkeeping of each), all of which it keeps, and copies into webhook bodies
    /// and dead letters. Measured once: admission and finishing both read it.
    let bytes: Int

    /// A consumed record, in either form, in the given assignment epoch and offset generation.
    /// - Parameter bytes: what it holds for flow control, as admitted.
    init(
        content: Content, epoch: UInt64, generation: UInt32, orderingKey: OrderingKey?, bytes: Int, wait: RequestWait? = nil,
        replaying: Bool = false
    ) {
        self.content = content
        self.epoch = epoch
        self.generation = generation
        self.orderingKey = orderingKey
        self.bytes = bytes
        self.wait = wait
        self.replaying = replaying
    }

    /// A consumed message in the given assignment epoch and offset generation.
    /// - Parameter bytes: what it holds for flow control, as admitted (``bytes(of:)`` by default).
    convenience init(
        message: KafkaMessage, epoch: UInt64, generation: UInt32, orderingKey: OrderingKey?, bytes: Int? = nil, wait: RequestWait? = nil,
        replaying: Bool = false
    ) {
        self.init(
            content: .message(message), epoch: epoch, generation: generation, orderingKey: orderingKey,
            bytes: bytes ?? Self.bytes(of: message), wait: wait, replaying: replaying)
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
/// A key is a 64-bit hash of the partition and the token, nothing else: it is made from the
/// token's bytes where they lie (a record decided in place has no copy of them), and a record in
/// flight keeps no reference for it. The partition's part is hashed once for a run of records
/// (with the process's seeded `Hasher`); the token's eight bytes at a time with a multiply-mix,
/// a tenth of `Hasher`'s cost on a 64-character token. Two tokens whose keys collide are ordered
/// after each other too: a rare wait, never a wrong order, and the partition's seed differs from
/// process to process, so no input can count on a collision.
struct OrderingKey: Hashable, Sendable {
    /// The hash of the partition and the token (or of the partition alone).
    private let value: UInt64

    private init(value: UInt64) {
        self.value = value
    }

    /// The key's hash in the worker's tables: its value, already a seeded 64-bit hash, mixed with
    /// the table's seed. Through `hash(into:)` every lookup ran SipHash over the eight bytes
    /// (`Hasher`'s finalisation alone was about 340 instructions a record, `bench counts`: a
    /// record's key is looked up when it is admitted and when it finishes). `_rawHashValue(seed:)`
    /// is the requirement `Dictionary` and `Set` call, which the standard library's own integers
    /// implement the same way.
    func _rawHashValue(seed: Int) -> Int {
        Int(truncatingIfNeeded: Self.mix(value ^ UInt64(truncatingIfNeeded: seed)))
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(value)
    }

    /// The seed of the keys of `partition`: each record's key continues it with its token.
    static func seed(of partition: TopicPartition) -> UInt64 {
        var hasher = Hasher()
        hasher.combine(partition)
        return UInt64(truncatingIfNeeded: hasher.finalize())
    }

    /// Same device token in the same partition (`ordering: key`, the default): the key of the
    /// token `bytes` (nil for a null key, the same as an empty one), from the partition's ``seed(of:)``.
    static func device(_ seed: UInt64, token bytes: UnsafeRawBufferPointer?) -> OrderingKey {
        guard let bytes, !bytes.isEmpty else { return OrderingKey(value: mix(seed ^ 0x9E37_79B9_7F4A_7C15)) }
        var hash = seed ^ UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15
        let words = bytes.count / 8
        for word in 0..<words {
            hash = mix(hash ^ bytes.loadUnaligned(fromByteOffset: word * 8, as: UInt64.self))
        }
        var tail: UInt64 = 0
        for position in (words * 8)..<bytes.count { tail = tail << 8 | UInt64(bytes[position]) }
        return OrderingKey(value: mix(hash ^ tail))
    }

    /// Same partition: `ordering: partition`.
    static func partition(_ partition: TopicPartition) -> OrderingKey {
        OrderingKey(value: mix(seed(of: partition)))
    }

    /// A 64-bit finaliser (the multiply-xorshift of MurmurHash3's): every bit of `x` moves every
    /// bit of the result.
    private static func mix(_ x: UInt64) -> UInt64 {
        var x = x
        x ^= x >> 33
        x = x &* 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x = x &* 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return x
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

    /// The key of a record of `partition` whose key is `token` (nil: Kafka's null key).
    func key(of partition: TopicPartition, token: UnsafeRawBufferPointer?) -> OrderingKey? {
        keys(of: partition).key(token: token)
    }

    /// The keys of the records of one partition, made once for a run of them.
    struct Keys: Sendable {
        /// The seed a key continues (ordering by key), or the one key (by partition), or none.
        fileprivate let seed: UInt64?
        fileprivate let partitionKey: OrderingKey?

        /// The key of a record whose key is `token` (nil: Kafka's null key).
        func key(token: UnsafeRawBufferPointer?) -> OrderingKey? {
            if let seed { return .device(seed, token: token) }
            return partitionKey
        }
    }

    /// The keys of the records of `partition`.
    func keys(of partition: TopicPartition) -> Keys {
        switch mode {
        case .key: Keys(seed: OrderingKey.seed(of: orderingPartition(of: partition)), partitionKey: nil)
        case .partition: Keys(seed: nil, partitionKey: .partition(orderingPartition(of: partition)))
        case .unordered: Keys(seed: nil, partitionKey: nil)
        }
    }
}
