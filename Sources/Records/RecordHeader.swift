/// One Kafka record header: a name and an optional value. The same type on both sides of the
/// Kafka layer (a consumed record's headers, a request's headers, an output's headers), so that
/// a record's headers pass from the consumer to the rules and from the rules to the producer
/// without being copied.
///
/// The value is a view (``RecordBytes``): a consumed record's header values are views of the one
/// buffer the Kafka layer copied the record into, not an array each.
public struct RecordHeader: Sendable, Hashable {
    /// The header name as received (Kafka allows repeats and keeps their order; the rules match
    /// names without regard to case).
    public var name: String
    /// The raw value; `nil` is Kafka's null value (a header without a value), distinct from an
    /// empty one.
    public var value: RecordBytes?

    /// Makes a header from a view of raw bytes.
    @inlinable
    public init(name: String, value: RecordBytes?) {
        self.name = name
        self.value = value
    }

    /// Makes a header from raw bytes (kept as they are, not copied).
    @inlinable @_disfavoredOverload
    public init(name: String, value: [UInt8]?) {
        self.init(name: name, value: value.map { RecordBytes($0) })
    }

    /// Makes a header whose value is the UTF-8 bytes of `value`.
    @inlinable
    public init(name: String, value: String) {
        self.init(name: name, value: RecordBytes(value))
    }
}
