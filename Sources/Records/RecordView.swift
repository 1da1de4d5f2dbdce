/// Where one header of a lent record lies: its name's bytes and its value's (nil: Kafka's null
/// value), in memory that someone else owns (librdkafka's parsed headers of a consumed message,
/// or the buffer an owned record was laid out in).
///
/// A lender makes these for ``RecordView``, which hands out spans whose lifetime the compiler
/// checks; the in-place path also describes an output's headers with them for the producer, which
/// copies them during the call.
public struct LentHeader: BitwiseCopyable {
    /// The name's bytes (no terminating NUL).
    public let name: UnsafeRawBufferPointer
    /// The value's bytes; nil for a null value.
    public let value: UnsafeRawBufferPointer?

    /// Describes a header whose bytes lie at `name` and `value`.
    @inlinable
    package init(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
        self.name = name
        self.value = value
    }
}

/// A record lent in place: its key, value and headers read where they lie, as spans that cannot
/// outlive the lender (non-escapable: SE-0446, SE-0447).
///
/// The worker decides a request that waits for nothing (no service extension, no state to
/// change: most requests) on a view of the consumed message while librdkafka still owns its
/// bytes, writes its outputs into a buffer of its own and hands them to the producer, which copies
/// them; no byte of the request is copied into a Swift buffer, and no object is made for it
/// (docs/worker.md, "One path for a record"). The view is made only inside a lender's
/// `withRecordView`-style scope, and the compiler proves that neither it nor any span read from it
/// is used after that scope ends.
///
/// The same type lends an owned record (a JSON line offline, a record that waits on an
/// extension), so that one validator and one set of rules read both.
public struct RecordView: ~Escapable {
    @usableFromInline let lentKey: UnsafeRawBufferPointer?
    @usableFromInline let lentValue: UnsafeRawBufferPointer?
    @usableFromInline let lentHeaders: UnsafeBufferPointer<LentHeader>
    /// The name of the topic it was read from, as bytes (a string of it would be a copy per
    /// record: most topic names are longer than a small string holds).
    @usableFromInline let lentTopic: UnsafeRawBufferPointer
    /// Its partition.
    public let partition: Int32
    /// Its offset.
    public let offset: Int64
    /// Its timestamp in milliseconds since 1970, when it has one.
    public let timestampMilliseconds: Int64?

    /// A view of bytes that `owner` keeps alive: the view may be used only while `owner` is
    /// borrowed, which the compiler enforces.
    ///
    /// - Parameters:
    ///   - key: the key's bytes; nil for Kafka's null key. An empty key must have a base address
    ///     (any), as librdkafka tells empty from null by it.
    ///   - value: the value's bytes; nil for a tombstone.
    ///   - headers: the headers, in order.
    ///   - topic: the UTF-8 bytes of the topic's name.
    @_lifetime(borrow owner)
    @inlinable
    package init<Owner: ~Copyable & ~Escapable>(
        key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer?, headers: UnsafeBufferPointer<LentHeader>,
        topic: UnsafeRawBufferPointer, partition: Int32, offset: Int64, timestampMilliseconds: Int64?, owner: borrowing Owner
    ) {
        lentKey = key
        lentValue = value
        lentHeaders = headers
        lentTopic = topic
        self.partition = partition
        self.offset = offset
        self.timestampMilliseconds = timestampMilliseconds
    }

    /// The key; nil for Kafka's null key.
    public var key: RawSpan? {
        @_lifetime(copy self)
        @inlinable get {
            guard let lentKey else { return nil }
            return unsafe _overrideLifetime(RawSpan(_unsafeBytes: lentKey), copying: self)
        }
    }

    /// The value; nil for a tombstone (null value), distinct from an empty value.
    public var value: RawSpan? {
        @_lifetime(copy self)
        @inlinable get {
            guard let lentValue else { return nil }
            return unsafe _overrideLifetime(RawSpan(_unsafeBytes: lentValue), copying: self)
        }
    }

    /// How many headers the record has.
    @inlinable public var headerCount: Int { lentHeaders.count }

    /// The name of header `index` (0 up to ``headerCount``), as received.
    @_lifetime(copy self)
    @inlinable
    public func headerName(_ index: Int) -> RawSpan {
        unsafe _overrideLifetime(RawSpan(_unsafeBytes: lentHeaders[index].name), copying: self)
    }

    /// The value of header `index`; nil for a null value.
    @_lifetime(copy self)
    @inlinable
    public func headerValue(_ index: Int) -> RawSpan? {
        guard let value = lentHeaders[index].value else { return nil }
        return unsafe _overrideLifetime(RawSpan(_unsafeBytes: value), copying: self)
    }

    /// The topic it was read from (a new string: ``withUnsafeTopicBytes(_:)`` reads it in place).
    public var topic: String { String(decoding: lentTopic, as: UTF8.self) }

    /// Where the record was read: its topic, partition and offset.
    public var position: TopicPartitionOffset {
        TopicPartitionOffset(topic: topic, partition: partition, offset: offset)
    }

    /// Calls `body` with the UTF-8 bytes of its topic's name where they lie; they must not be
    /// used after `body` returns.
    @inlinable
    public func withUnsafeTopicBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(lentTopic)
    }

    /// Calls `body` with the key's bytes where they lie (nil for a null key); they must not be used
    /// after `body` returns.
    @inlinable
    public func withUnsafeKeyBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer?) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(lentKey)
    }

    /// Calls `body` with the value's bytes where they lie (nil for a tombstone); they must not be
    /// used after `body` returns.
    @inlinable
    public func withUnsafeValueBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer?) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(lentValue)
    }

    /// Calls `body` with every header where it lies, in order; they must not be used after `body`
    /// returns.
    @inlinable
    public func withUnsafeHeaders<Result, Failure: Error>(
        _ body: (UnsafeBufferPointer<LentHeader>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(lentHeaders)
    }

    /// Calls `body` with the bytes of header `index`'s name and value where they lie; they must not
    /// be used after `body` returns.
    @inlinable
    public func withUnsafeHeaderBytes<Result, Failure: Error>(
        _ index: Int, _ body: (_ name: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(lentHeaders[index].name, lentHeaders[index].value)
    }
}
