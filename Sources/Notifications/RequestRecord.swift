public import Foundation
public import Records

/// A record as it arrives, a request or a user's response: the Kafka record, or a JSON line offline.
public struct RequestRecord: Sendable {
    /// The key: the device token. Like the value and the header values, a view: of a consumed
    /// record, a view of the one buffer it was copied into.
    public var key: RecordBytes?
    /// The headers in the order received.
    public var headers: [RecordHeader]
    /// The value: the JSON payload (of a response: the response object).
    public var value: RecordBytes?
    /// Where the record came from.
    public var source: TopicPartitionOffset
    /// The record's timestamp, when it has one.
    public var timestamp: Date?

    /// Makes a record.
    public init(
        key: RecordBytes?, headers: [RecordHeader], value: RecordBytes?, source: TopicPartitionOffset,
        timestamp: Date? = nil
    ) {
        self.key = key
        self.headers = headers
        self.value = value
        self.source = source
        self.timestamp = timestamp
    }

    /// Makes a record from arrays (kept as they are, not copied).
    @_disfavoredOverload
    public init(
        key: [UInt8]?, headers: [RecordHeader], value: [UInt8]?, source: TopicPartitionOffset, timestamp: Date? = nil
    ) {
        self.init(key: key.map { RecordBytes($0) }, headers: headers, value: value.map { RecordBytes($0) }, source: source, timestamp: timestamp)
    }
}

extension RequestRecord {
    /// Where a record's parts lie once laid out in memory of their own (``layOut(into:headers:)``);
    /// its headers' views are in the buffer given for them, in order.
    @usableFromInline
    package struct Layout {
        @usableFromInline
        package var topic: UnsafeRawBufferPointer
        @usableFromInline
        package var key: UnsafeRawBufferPointer?
        @usableFromInline
        package var value: UnsafeRawBufferPointer?
    }

    /// The bytes ``layOut(into:headers:)`` needs: the topic's name, the key, the value and every
    /// header's name and value.
    @usableFromInline
    package var laidOutByteCount: Int {
        var size = (key?.count ?? 0) + (value?.count ?? 0) + source.topic.utf8.count
        for header in headers { size += header.name.utf8.count + (header.value?.count ?? 0) }
        return size
    }

    /// The timestamp in milliseconds since 1970, as a consumed message gives it.
    @usableFromInline
    package var timestampMilliseconds: Int64? {
        timestamp.map { Int64(($0.timeIntervalSince1970 * 1_000).rounded(.down)) }
    }

    /// Copies the record's parts into `bytes` (at least ``laidOutByteCount`` of them), one after
    /// another, as a consumed message's lie in librdkafka's memory, and initialises `lent` (room
    /// for every header) with its headers' views of them.
    @usableFromInline
    package func layOut(into bytes: UnsafeMutableRawBufferPointer, headers lent: UnsafeMutableBufferPointer<LentHeader>) -> Layout {
        var placer = Placer(bytes: bytes)
        let layout = Layout(topic: placer.place(source.topic), key: key.map { placer.place($0) }, value: value.map { placer.place($0) })
        for index in headers.indices {
            let name = placer.place(headers[index].name)
            lent.initializeElement(at: index, to: LentHeader(name: name, value: headers[index].value.map { placer.place($0) }))
        }
        return layout
    }

    /// Copies parts one after another into a buffer. A value passed along, not a nested function
    /// capturing the offset: a captured variable is checked for exclusive access at run time on
    /// every part.
    private struct Placer {
        let bytes: UnsafeMutableRawBufferPointer
        var used = 0

        /// Copies `source` into the buffer; where it lies there (an empty part: a pointer, no
        /// bytes). Raw bytes, not a generic collection: through `some Collection` each part's copy
        /// went through the protocol's witnesses, unspecialised, about a fifth of a 300-byte
        /// record's validation (`bench validation --instructions`).
        mutating func place(_ source: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
            let start = bytes.baseAddress! + used
            if let base = source.baseAddress, !source.isEmpty { start.copyMemory(from: base, byteCount: source.count) }
            used += source.count
            return UnsafeRawBufferPointer(start: start, count: source.count)
        }

        mutating func place(_ part: RecordBytes) -> UnsafeRawBufferPointer {
            part.withUnsafeBytes { place($0) }
        }

        mutating func place(_ text: String) -> UnsafeRawBufferPointer {
            var text = text
            return text.withUTF8 { place(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Lends the record as a ``RecordView``, as a consumed message is lent in place, so that one
    /// validator reads both: its key, value and headers laid out in one temporary buffer for the
    /// call (the views of an owned record live in arrays that cannot be lent all at once).
    ///
    /// Header positions are the same in the view and in ``headers``.
    @inlinable
    package func withView<Result, Failure: Error>(_ body: (borrowing RecordView) throws(Failure) -> Result) throws(Failure) -> Result {
        try withUnsafeTemporaryAllocation(byteCount: max(laidOutByteCount, 1), alignment: 1) { (bytes) throws(Failure) -> Result in
            try withUnsafeTemporaryAllocation(of: LentHeader.self, capacity: max(headers.count, 1)) { (lent) throws(Failure) -> Result in
                let layout = layOut(into: bytes, headers: lent)
                defer { lent.baseAddress.map { _ = $0.deinitialize(count: headers.count) } }
                let view = RecordView(
                    key: layout.key, value: layout.value, headers: UnsafeBufferPointer(rebasing: lent[..<headers.count]),
                    topic: layout.topic, partition: source.partition, offset: source.offset,
                    timestampMilliseconds: timestampMilliseconds, owner: bytes)
                return try body(view)
            }
        }
    }
}
