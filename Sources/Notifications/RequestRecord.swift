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
