import Foundation
public import Records

/// Messages a consumer lends instead of copying (``ConsumerConfiguration/lendsMessages``): each
/// is read in place, as a ``RecordView`` of librdkafka's own bytes, and the messages go back to
/// librdkafka (`rd_kafka_message_destroy`) when the batch is released.
///
/// The worker decides a record that waits for nothing while its bytes are still librdkafka's,
/// and copies out (``message(at:)``) only the records it keeps: those that wait on an extension,
/// on their key, or on state (docs/worker.md, "One path for a record"). A batch holds one
/// allocation for its message pointers, whatever its size.
///
/// Lifetime: librdkafka requires every message destroyed before its consumer closes and its handle
/// is destroyed. A batch therefore keeps the handle's owner alive (the handle is destroyed after
/// the last batch is released, wherever that happens), and counts as a loan of its consumer,
/// whose close waits, up to a bound, until every loan came back (``ConsumerLoans``).
public final class ConsumedBatch: @unchecked Sendable {
    // @unchecked Sendable: the message pointers are written once, in init, and read-only after;
    // librdkafka's messages may be read from any thread, and `rd_kafka_message_headers` (which
    // parses a message's headers once and caches them in the message) and the header table laid
    // out from them are only read with the batch lent to one reader at a time: the worker reads
    // a batch from one task.

    /// The messages, in the order polled.
    private let messages: UnsafeMutableBufferPointer<RDKafkaMessage>
    /// The index in ``topicNames`` of each message's topic.
    private let topicIndices: UnsafeMutableBufferPointer<UInt8>
    /// The names of the batch's topics (usually one).
    public let topicNames: [String]
    /// Their UTF-8 bytes, one after another, which views of the records lend.
    private let topicBytes: UnsafeMutableRawBufferPointer
    /// Where each topic's name is in ``topicBytes``.
    private let topicRanges: [Range<Int>]
    /// The handle's owner, kept alive until every message is destroyed.
    private let client: RDKafkaClient
    /// The consumer's count of lent batches.
    private let loans: ConsumerLoans
    /// Every message's header list, laid out once for the batch when first read
    /// (``HeaderTable``): views lend their slices of it.
    private var headerTable: HeaderTable?

    /// How many messages the batch holds.
    public var count: Int { messages.count }

    /// Takes ownership of `messages` (consumed messages without an error); `topics` gives each
    /// one's topic as an index into `topicNames`.
    init(messages: [RDKafkaMessage], topics: [UInt8], topicNames: [String], client: RDKafkaClient, loans: ConsumerLoans) {
        precondition(messages.count == topics.count, "one topic per message")
        self.messages = .allocate(capacity: messages.count)
        _ = self.messages.initialize(from: messages)
        topicIndices = .allocate(capacity: topics.count)
        _ = topicIndices.initialize(from: topics)
        self.topicNames = topicNames
        var ranges: [Range<Int>] = []
        var total = 0
        for name in topicNames {
            ranges.append(total..<total + name.utf8.count)
            total += name.utf8.count
        }
        topicBytes = .allocate(byteCount: max(total, 1), alignment: 1)
        for (name, range) in zip(topicNames, ranges) {
            _ = UnsafeMutableRawBufferPointer(rebasing: topicBytes[range]).initializeMemory(as: UInt8.self, from: name.utf8)
        }
        topicRanges = ranges
        self.client = client
        self.loans = loans
        loans.lent()
    }

    deinit {
        for message in messages { message.destroy() }
        messages.deallocate()
        topicIndices.deallocate()
        topicBytes.deallocate()
        headerTable?.deallocate()
        loans.returned()
    }

    private func raw(_ index: Int) -> RDKafkaMessage {
        messages[index]
    }

    /// The index in ``topicNames`` of message `index`'s topic.
    public func topicIndex(at index: Int) -> Int { Int(topicIndices[index]) }

    /// The topic message `index` was read from.
    public func topic(at index: Int) -> String { topicNames[Int(topicIndices[index])] }

    /// Its partition.
    public func partition(at index: Int) -> Int32 { raw(index).partition }

    /// Its offset.
    public func offset(at index: Int) -> Int64 { raw(index).offset }

    /// The sizes of message `index`: its key's and value's bytes, its headers' names and values
    /// together, and how many headers it has.
    public func sizes(at index: Int) -> (key: Int, value: Int, headerBytes: Int, headers: Int) {
        let message = raw(index)
        let table = laidOutHeaders
        return (message.keyCount, message.valueCount, table.byteCounts[index], table.headers(of: index).count)
    }

    /// The batch's header table, laid out at the first read and kept.
    private var laidOutHeaders: HeaderTable {
        if let headerTable { return headerTable }
        let table = HeaderTable(messages: messages)
        headerTable = table
        return table
    }

    /// Calls `body` with the key of message `index` where it lies (nil for a null key).
    public func withUnsafeKeyBytes<Result>(at index: Int, _ body: (UnsafeRawBufferPointer?) throws -> Result) rethrows -> Result {
        guard let key = raw(index).key else { return try body(nil) }
        return try body(key)
    }

    /// Lends message `index` to `body` as a ``RecordView``: its key, value and headers where
    /// librdkafka keeps them. The view (and every span read from it) cannot outlive the call.
    @inlinable
    public func withRecordView<Result, Failure: Error>(
        at index: Int, _ body: (borrowing RecordView) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        // Inlinable, so that the caller's specialisation runs: unspecialised, this generic
        // method cost about 320 instructions a record of its own (`bench counts`). What it reads
        // of librdkafka's message is behind `parts(at:)`, which is not generic.
        let parts = parts(at: index)
        let view = RecordView(
            key: parts.key, value: parts.value, headers: parts.headers, topic: parts.topic,
            partition: parts.partition, offset: parts.offset,
            timestampMilliseconds: parts.timestampMilliseconds, owner: self)
        return try body(view)
    }

    /// Where the parts of a lent message lie, for a ``RecordView`` of them.
    @usableFromInline
    struct LentParts {
        @usableFromInline let key: UnsafeRawBufferPointer?
        @usableFromInline let value: UnsafeRawBufferPointer?
        @usableFromInline let headers: UnsafeBufferPointer<LentHeader>
        @usableFromInline let topic: UnsafeRawBufferPointer
        @usableFromInline let partition: Int32
        @usableFromInline let offset: Int64
        @usableFromInline let timestampMilliseconds: Int64?
    }

    /// Where message `index`'s key, value, headers and topic lie.
    @usableFromInline
    func parts(at index: Int) -> LentParts {
        let message = raw(index)
        let topic = UnsafeRawBufferPointer(rebasing: topicBytes[topicRanges[Int(topicIndices[index])]])
        // nil for a null key or a tombstone; an empty one has a pointer.
        return LentParts(
            key: message.key, value: message.value, headers: laidOutHeaders.headers(of: index), topic: topic, partition: message.partition,
            offset: message.offset, timestampMilliseconds: message.timestampMilliseconds)
    }

    /// Message `index` copied out into a ``KafkaMessage`` of its own (one buffer for its bytes),
    /// for a record that waits: it no longer needs the batch.
    public func message(at index: Int) -> KafkaMessage {
        MessageDecoder.copy(raw(index), topic: topic(at: index))
    }

    /// Message `index` copied as its view reads it (``RecordCopy``), for a request that waits
    /// while the batch goes back to librdkafka: one allocation, lent again without a copy.
    public func copy(at index: Int) -> RecordCopy {
        withRecordView(at: index) { RecordCopy.copying($0, topic: topic(at: index)) }
    }
}

/// The header lists of a batch's messages, laid out once, one after another, as ``RecordView``s
/// read them: each header's name (its length found once) and value where librdkafka keeps them.
///
/// Both the worker's admission (a record's size, for flow control) and its view read a message's
/// headers; each read walked librdkafka's list again (`rd_kafka_header_get_all` and `strlen` per
/// header): 1,013 instructions a record for the headers, then 852 (`bench counts`, pretty JSON).
private struct HeaderTable {
    /// Every message's headers, in message order.
    let entries: UnsafeMutableBufferPointer<LentHeader>
    /// Where each message's headers start in `entries`, and (last) where the last one's end.
    let starts: UnsafeMutableBufferPointer<Int>
    /// Each message's headers' names and values together, in bytes.
    let byteCounts: UnsafeMutableBufferPointer<Int>

    /// Reads the headers of every message (`rd_kafka_message_headers` parses and caches them in
    /// the message).
    init(messages: UnsafeMutableBufferPointer<RDKafkaMessage>) {
        let lists = messages.map(\.headers)
        let total = lists.reduce(0) { $0 + ($1?.count ?? 0) }
        let entries = UnsafeMutableBufferPointer<LentHeader>.allocate(capacity: max(total, 1))
        let starts = UnsafeMutableBufferPointer<Int>.allocate(capacity: messages.count + 1)
        let byteCounts = UnsafeMutableBufferPointer<Int>.allocate(capacity: max(messages.count, 1))
        var next = 0
        for (index, list) in lists.enumerated() {
            starts[index] = next
            var bytes = 0
            list?.forEach { name, value, valueSize in
                // A table of `total` entries: a message's list does not change once parsed.
                guard next < total else { return }
                let nameBytes = name.map { UnsafeRawBufferPointer(start: $0, count: strlen($0)) } ?? UnsafeRawBufferPointer(start: nil, count: 0)
                entries[next] = LentHeader(name: nameBytes, value: value.map { UnsafeRawBufferPointer(start: $0, count: valueSize) })
                bytes += nameBytes.count + valueSize
                next += 1
            }
            byteCounts[index] = bytes
        }
        starts[messages.count] = next
        self.entries = entries
        self.starts = starts
        self.byteCounts = byteCounts
    }

    /// The headers of message `index`.
    func headers(of index: Int) -> UnsafeBufferPointer<LentHeader> {
        UnsafeBufferPointer(rebasing: entries[starts[index]..<starts[index + 1]])
    }

    func deallocate() {
        entries.deallocate()
        starts.deallocate()
        byteCounts.deallocate()
    }
}

/// How many batches a consumer has lent and not had back, so that its close can wait for them:
/// librdkafka's messages must all be destroyed before the consumer closes.
final class ConsumerLoans: @unchecked Sendable {
    // @unchecked Sendable: `outstanding` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var outstanding = 0

    /// A batch was lent.
    func lent() {
        condition.lock()
        outstanding += 1
        condition.unlock()
    }

    /// A batch came back (was released).
    func returned() {
        condition.lock()
        outstanding -= 1
        if outstanding == 0 { condition.broadcast() }
        condition.unlock()
    }

    /// Waits until no batch is out, at most `limit` seconds; how many still are.
    func waitForAll(limit: TimeInterval) -> Int {
        let deadline = Date(timeIntervalSinceNow: limit)
        condition.lock()
        defer { condition.unlock() }
        while outstanding > 0, condition.wait(until: deadline) {}
        return outstanding
    }
}
