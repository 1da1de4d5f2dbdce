/// One Kafka record header: a name and an optional value.
public struct RecordHeader: Sendable, Hashable {
    /// The header name as received (matched without regard to case).
    public var name: String
    /// The raw value; nil for a header without a value.
    public var value: [UInt8]?

    /// Makes a header from raw bytes.
    public init(name: String, value: [UInt8]?) {
        self.name = name
        self.value = value
    }

    /// Makes a header from a string value, encoded as UTF-8.
    public init(name: String, value: String) {
        self.init(name: name, value: Array(value.utf8))
    }
}
