import Notifications
public import Records

/// One record the dispatcher writes: topic, key, headers and value bytes, ready to produce.
public struct OutputRecord: Sendable, Hashable {
    /// Which kind of output this is.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A delivery record (deliveries topic).
        case delivery
        /// A launch record (launches topic).
        case launch
        /// An invalid request or response (dead-letter topic).
        case deadLetter
        /// What a user's response came to (actions topic).
        case action
        /// A token reported invalid after its dead letter (feedback topic, SEMANTICS section 12.2).
        case feedback
        /// An activity's new entry, or its tombstone (activities topic, section 14.6).
        case activity
        /// A notification stored for an offline device, or its tombstone (stored topic, section 16).
        case stored
        /// A device's new badge count (badges topic, section 21.3).
        case badge
        /// An ``ActivityCommand`` for the worker that owns its activity token (an internal topic;
        /// never written offline).
        case command

        /// The kind in words, for messages: `delivery`, `launch`, `dead-letter`.
        public var description: String { self == .deadLetter ? "dead-letter" : rawValue }
    }

    /// The kind of record.
    public var kind: Kind
    /// The configured topic name.
    public var topic: String
    /// The key bytes (nil for a dead letter of a request without key). A view: a delivery's key is
    /// its request's, a view of the consumed record's buffer, carried without a copy.
    public var key: RecordBytes?
    /// The headers, in order.
    public var headers: [RecordHeader]
    /// The value bytes (nil: a tombstone).
    public var value: RecordBytes?
    /// The partition to write to; nil (what the rules always give) lets the producer choose by key.
    /// The worker sets it for records it routes itself.
    public var partition: Int32?

    /// Creates a record.
    package init(
        kind: Kind, topic: String, key: RecordBytes?, headers: [RecordHeader], value: RecordBytes?, partition: Int32? = nil
    ) {
        self.kind = kind
        self.topic = topic
        self.key = key
        self.headers = headers
        self.value = value
        self.partition = partition
    }

    /// Creates a record from arrays (kept as they are, not copied).
    @_disfavoredOverload
    package init(kind: Kind, topic: String, key: [UInt8]?, headers: [RecordHeader], value: [UInt8]?, partition: Int32? = nil) {
        self.init(kind: kind, topic: topic, key: key.map { RecordBytes($0) }, headers: headers, value: value.map { RecordBytes($0) }, partition: partition)
    }
}
