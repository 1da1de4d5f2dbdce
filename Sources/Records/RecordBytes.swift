#if canImport(Glibc)
public import Glibc
#elseif canImport(Darwin)
public import Darwin
#endif

/// The bytes of one part of a record (its key, its value, a header's value): a view of a buffer
/// that may hold more.
///
/// The Kafka layer copies each consumed record out of librdkafka into one buffer, and the record's
/// key, value and header values are views of it: one allocation per record instead of one per
/// part (a request with four headers was six). A view keeps its whole buffer alive, which is what
/// the worker does anyway: a record is held until its outputs are acknowledged.
///
/// Why not `ArraySlice<UInt8>`: a slice is four words, and the records that carry two or three of
/// them (`ProducerRecord`, `OutputRecord`, the worker's ordering key) grew past what the compiler
/// passes in registers; it then copied them where it had moved them, about 26 more retains per
/// request (measured under callgrind: `git log -p docs/performance.md`). A view is two words. Its indices
/// start at 0, as an array's do, so code written for arrays reads it correctly.
public struct RecordBytes: Sendable, Hashable, RandomAccessCollection, ExpressibleByArrayLiteral {
    /// The buffer the bytes are in.
    @usableFromInline let buffer: [UInt8]
    /// Where they start in `buffer`. 32 bits each, so that the view is two words: a Kafka record
    /// is at most `message.max.bytes`, far below 4 GiB.
    @usableFromInline let offset: UInt32
    /// How many there are.
    @usableFromInline let length: UInt32

    /// The whole of `bytes` (not copied).
    @inlinable
    public init(_ bytes: [UInt8]) {
        precondition(bytes.count <= UInt32.max, "RecordBytes holds at most 4 GiB")
        buffer = bytes
        offset = 0
        length = UInt32(truncatingIfNeeded: bytes.count)
    }

    /// The bytes of `buffer` in `range` (not copied).
    @inlinable
    public init(_ buffer: [UInt8], range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= buffer.count, "range outside the buffer")
        precondition(buffer.count <= UInt32.max, "RecordBytes holds at most 4 GiB")
        self.buffer = buffer
        offset = UInt32(truncatingIfNeeded: range.lowerBound)
        length = UInt32(truncatingIfNeeded: range.count)
    }

    /// The UTF-8 bytes of `text`.
    @inlinable
    public init(_ text: String) {
        self.init(Array(text.utf8))
    }

    @inlinable
    public init(arrayLiteral elements: UInt8...) {
        self.init(elements)
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { Int(length) }
    @inlinable public var count: Int { Int(length) }
    @inlinable public var isEmpty: Bool { length == 0 }

    @inlinable
    public subscript(position: Int) -> UInt8 {
        precondition(position >= 0 && position < Int(length), "index out of range")
        return buffer.withUnsafeBufferPointer { $0[Int(offset) + position] }
    }

    /// The first `maxLength` bytes (all of them when there are fewer), as a view of the same buffer.
    @inlinable
    public func leading(_ maxLength: Int) -> RecordBytes {
        RecordBytes(buffer, range: Int(offset)..<Int(offset) + Swift.min(Swift.max(0, maxLength), Int(length)))
    }

    /// The bytes as an array: the buffer itself when the view is all of it, else a copy.
    @inlinable
    public var array: [UInt8] {
        offset == 0 && Int(length) == buffer.count ? buffer : Array(self)
    }

    /// Calls `body` with the bytes in memory (valid only during the call).
    @inlinable
    public func withUnsafeBufferPointer<Result, Failure: Error>(
        _ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try buffer.withUnsafeBufferPointer { (whole) throws(Failure) -> Result in
            try body(UnsafeBufferPointer(rebasing: whole[Int(offset)..<Int(offset) + Int(length)]))
        }
    }

    /// Calls `body` with the bytes in memory (valid only during the call).
    @inlinable
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withUnsafeBufferPointer { (buffer) throws(Failure) -> Result in try body(UnsafeRawBufferPointer(buffer)) }
    }

    /// Lets generic algorithms (`String(decoding:as:)`, `elementsEqual`, `Array.init`) read the
    /// bytes in place.
    @inlinable
    public func withContiguousStorageIfAvailable<Result>(
        _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result? {
        try withUnsafeBufferPointer(body)
    }

    /// Equal when the bytes are, wherever they are. Compared with `memcmp`: the worker compares
    /// device tokens (64 bytes or more) in its ordering-key lookups, where a generic byte-by-byte
    /// `elementsEqual` showed in the profile.
    @inlinable
    public static func == (left: RecordBytes, right: RecordBytes) -> Bool {
        guard left.length == right.length else { return false }
        guard left.length > 0 else { return true }
        return left.withUnsafeBytes { l in
            right.withUnsafeBytes { r in memcmp(l.baseAddress!, r.baseAddress!, l.count) == 0 }
        }
    }

    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(Int(length))
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

extension RecordBytes: CustomStringConvertible {
    /// The bytes as UTF-8 text (invalid sequences replaced), for messages and test output.
    public var description: String {
        withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    }
}
