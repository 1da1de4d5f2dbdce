/// One Kafka record header: a name and an optional (possibly null) byte value.
public struct KafkaHeader: Sendable, Hashable {
    /// The header name (Kafka allows duplicates; order is kept).
    public var name: String
    /// The header value; `nil` is Kafka's null value, distinct from an empty one.
    public var value: [UInt8]?

    /// Creates a header from its name and bytes.
    public init(name: String, value: [UInt8]?) {
        self.name = name
        self.value = value
    }

    /// Creates a header whose value is the UTF-8 bytes of `value`.
    public init(name: String, string value: String) {
        self.init(name: name, value: Array(value.utf8))
    }
}
