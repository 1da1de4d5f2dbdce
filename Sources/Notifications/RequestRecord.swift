public import Foundation
public import Records

/// A record as it arrives, a request or a user's response: the Kafka record, or a JSON line offline.
public struct RequestRecord: Sendable {
    /// The key: the device token.
    public var key: [UInt8]?
    /// The headers in the order received.
    public var headers: [RecordHeader]
    /// The value: the JSON payload (of a response: the response object).
    public var value: [UInt8]?
    /// Where the record came from.
    public var source: TopicPartitionOffset
    /// The record's timestamp, when it has one.
    public var timestamp: Date?

    /// Makes a record.
    public init(
        key: [UInt8]?, headers: [RecordHeader], value: [UInt8]?, source: TopicPartitionOffset, timestamp: Date? = nil
    ) {
        self.key = key
        self.headers = headers
        self.value = value
        self.source = source
        self.timestamp = timestamp
    }
}
