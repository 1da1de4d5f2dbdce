/// One Kafka record header: a name and an optional value. The same type on both sides of the
/// Kafka layer (a consumed record's headers, a request's headers, an output's headers), so that
/// a record's headers pass from the consumer to the rules and from the rules to the producer
/// without being copied.
public struct RecordHeader: Sendable, Hashable {
    /// The header name as received (Kafka allows repeats and keeps their order; the rules match
    /// names without regard to case).
    public var name: String
    /// The raw value; `nil` is Kafka's null value (a header without a value), distinct from an
    /// empty one.
    public var value: [UInt8]?

    /// Makes a header from raw bytes.
    public init(name: String, value: [UInt8]?) {
        self.name = name
        self.value = value
    }

    /// Makes a header whose value is the UTF-8 bytes of `value`.
    public init(name: String, value: String) {
        self.init(name: name, value: Array(value.utf8))
    }
}
