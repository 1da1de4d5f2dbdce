/// A record copied out of the memory that lent it, laid out once as a ``RecordView`` reads it:
/// a request that must wait (behind an earlier record of its device) while its batch goes back
/// to librdkafka.
///
/// One allocation holds everything: the header table and, after it, the topic's name, the key,
/// the value and every header's name and value. Lending it again (``withView(_:)``) copies
/// nothing, and keeping it is one reference. Before, a waiting request was copied into an owned
/// message (a byte array, a header list with a string and a view per header, a box for the
/// fields) and, when its turn came, laid out a second time for its view: about 7,300 instructions
/// and 20 retains per record more than a request decided where librdkafka keeps it
/// (docs/performance.md, "What bounds the targets").
///
/// `@unchecked Sendable`: its storage is never changed once made, so threads may share it
/// (`ManagedBuffer`, which it is made of, cannot be `Sendable` itself).
public struct RecordCopy: @unchecked Sendable {
    /// The parts, in the tail of one object.
    @usableFromInline
    final class Storage: ManagedBuffer<Parts, LentHeader> {}

    @usableFromInline let storage: Storage

    /// Where the parts lie in the tail, and what is not bytes.
    @usableFromInline
    struct Parts {
        /// The topic's name (the lender's string, shared).
        @usableFromInline let topic: String
        @usableFromInline let partition: Int32
        @usableFromInline let offset: Int64
        @usableFromInline let timestampMilliseconds: Int64?
        let headerCount: Int
        /// Where the bytes start in the tail: the topic's name, then the key, then the value,
        /// then each header's name and value.
        let bytes: Int
        let topicCount: Int
        /// The key's and the value's byte counts; -1 for a null key or value.
        let keyCount: Int
        let valueCount: Int
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// Copies the record `view` lends.
    /// - Parameter topic: the name of its topic as a string (the view has its bytes), kept.
    public static func copying(_ view: borrowing RecordView, topic: consuming String) -> RecordCopy {
        let headerCount = view.lentHeaders.count
        var byteCount = view.lentTopic.count + (view.lentKey?.count ?? 0) + (view.lentValue?.count ?? 0)
        for header in view.lentHeaders { byteCount += header.name.count + (header.value?.count ?? 0) }
        // The table first, at the tail's start (its elements are header entries, so it is aligned
        // for them), then the bytes, which are only ever read as raw bytes.
        let tableBytes = headerCount * MemoryLayout<LentHeader>.stride
        var parts: Parts? = Parts(
            topic: consume topic, partition: view.partition, offset: view.offset, timestampMilliseconds: view.timestampMilliseconds,
            headerCount: headerCount, bytes: tableBytes, topicCount: view.lentTopic.count, keyCount: view.lentKey?.count ?? -1,
            valueCount: view.lentValue?.count ?? -1)
        let stride = MemoryLayout<LentHeader>.stride
        // The topic's name moved into the storage, not copied: a copy is a retain.
        let made = Storage.create(minimumCapacity: (tableBytes + byteCount + stride - 1) / stride) { _ in parts.take()! }
        let storage = unsafeDowncast(made, to: Storage.self)
        storage.withUnsafeMutablePointers { header, elements in
            var next = UnsafeMutableRawPointer(elements) + header.pointee.bytes
            _ = place(view.lentTopic, at: &next)
            if let key = view.lentKey { _ = place(key, at: &next) }
            if let value = view.lentValue { _ = place(value, at: &next) }
            for index in 0..<headerCount {
                let header = view.lentHeaders[index]
                let name = place(header.name, at: &next)
                let value = header.value.map { place($0, at: &next) }
                (elements + index).initialize(to: LentHeader(name: name, value: value))
            }
        }
        return RecordCopy(storage: storage)
    }

    /// Copies `part` to `next`, moving `next` past it; where it lies now. The position is passed,
    /// not captured by a nested function: a capture is checked for exclusive access at run time.
    private static func place(_ part: UnsafeRawBufferPointer, at next: inout UnsafeMutableRawPointer) -> UnsafeRawBufferPointer {
        let placed = UnsafeRawBufferPointer(start: next, count: part.count)
        if let base = part.baseAddress, !part.isEmpty { next.copyMemory(from: base, byteCount: part.count) }
        next += part.count
        return placed
    }

    /// The topic it was read from.
    public var topic: String { storage.header.topic }
    /// Its partition.
    public var partition: Int32 { storage.header.partition }
    /// Its offset.
    public var offset: Int64 { storage.header.offset }
    /// Its timestamp in milliseconds since 1970, when it has one.
    public var timestampMilliseconds: Int64? { storage.header.timestampMilliseconds }

    /// Lends the copy as a ``RecordView``, as its lender did: nothing is copied.
    @inlinable
    public func withView<Result, Failure: Error>(_ body: (borrowing RecordView) throws(Failure) -> Result) throws(Failure) -> Result {
        let parts = viewParts()
        let view = RecordView(
            key: parts.key, value: parts.value, headers: parts.headers, topic: parts.topic, partition: storage.header.partition,
            offset: storage.header.offset, timestampMilliseconds: storage.header.timestampMilliseconds, owner: storage)
        return try body(view)
    }

    /// Where the parts lie, for a view of them; valid while the copy lives.
    @usableFromInline
    func viewParts() -> (
        key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer?, headers: UnsafeBufferPointer<LentHeader>,
        topic: UnsafeRawBufferPointer
    ) {
        storage.withUnsafeMutablePointers { parts, elements in
            let start = UnsafeRawPointer(elements)
            let parts = parts.pointee
            var next = start + parts.bytes
            let topic = UnsafeRawBufferPointer(start: next, count: parts.topicCount)
            next += parts.topicCount
            var key: UnsafeRawBufferPointer?
            if parts.keyCount >= 0 {
                key = UnsafeRawBufferPointer(start: next, count: parts.keyCount)
                next += parts.keyCount
            }
            let value = parts.valueCount >= 0 ? UnsafeRawBufferPointer(start: next, count: parts.valueCount) : nil
            let headers = UnsafeBufferPointer(start: UnsafePointer(elements), count: parts.headerCount)
            return (key, value, headers, topic)
        }
    }
}
