public import JSON
public import Kafka
public import Notifications
public import Records

/// A Kafka record a test makes, the one builder of every test target: a request or response
/// record for the rules (``requestRecord``), or a record to produce (``producerRecord(topic:)``).
///
/// Unless told otherwise it is a valid alert request (``alertPayload``) for ``bundleID``, keyed by
/// the device token ``token(_:)``, read from offset 0 of partition 0 of the requests topic. Every
/// part can be given to the initialiser, and changed after with ``header(_:_:)``,
/// ``addingHeader(_:_:)``, ``payload(_:)`` and ``key(_:)``, each of which returns a changed copy.
public struct TestRecord: Sendable {
    /// The app the records are for unless told otherwise.
    public static let bundleID = "com.example.app"
    /// The topic requests are read from.
    public static let requestsTopic = "notifications.requests"
    /// The topic responses are read from.
    public static let responsesTopic = "notifications.responses"
    /// The value unless told otherwise: an alert with text.
    public static let alertPayload = #"{"aps":{"alert":"Hello"}}"#

    /// A 64-character device token (lowercase hexadecimal) made of `byte` repeated.
    public static func token(_ byte: UInt8 = 0xAB) -> String {
        let digits = String(byte, radix: 16, uppercase: false)
        return String(repeating: digits.count == 1 ? "0" + digits : digits, count: 32)
    }

    /// The key (the device token's UTF-8 bytes); nil is Kafka's null key.
    public var key: [UInt8]?
    /// The headers, in order.
    public var headers: [RecordHeader]
    /// The value; nil is a tombstone.
    public var value: [UInt8]?
    /// Where the record was read from (the topic of ``producerRecord(topic:)`` unless given).
    public var source: TopicPartitionOffset

    /// A record of `value`'s bytes, keyed by `token`, with `headers` (names and values, in order),
    /// read from `offset` of `partition` of `topic`.
    public init(
        token: String? = TestRecord.token(),
        headers: [(String, String)] = [("apns-topic", TestRecord.bundleID)],
        value: [UInt8]? = Array(TestRecord.alertPayload.utf8),
        topic: String = TestRecord.requestsTopic,
        partition: Int32 = 0,
        offset: Int64 = 0
    ) {
        key = token.map { Array($0.utf8) }
        self.headers = headers.map { RecordHeader(name: $0.0, value: $0.1) }
        self.value = value
        source = TopicPartitionOffset(topic: topic, partition: partition, offset: offset)
    }

    /// A record whose value is `payload` serialised compactly; otherwise as ``init(token:headers:value:topic:partition:offset:)``.
    public init(
        token: String? = TestRecord.token(),
        headers: [(String, String)] = [("apns-topic", TestRecord.bundleID)],
        payload: JSONValue,
        topic: String = TestRecord.requestsTopic,
        partition: Int32 = 0,
        offset: Int64 = 0
    ) {
        self.init(token: token, headers: headers, value: payload.serialized(), topic: topic, partition: partition, offset: offset)
    }

    /// The record with header `name` set to `value` (every header of exactly that name removed, the
    /// new one added after the others), or removed when `value` is nil.
    public func header(_ name: String, _ value: String?) -> TestRecord {
        var copy = self
        copy.headers.removeAll { $0.name == name }
        if let value { copy.headers.append(RecordHeader(name: name, value: value)) }
        return copy
    }

    /// The record with one more header after the others (a repeat when the name is there already);
    /// a nil `value` is Kafka's null header value.
    public func addingHeader(_ name: String, _ value: String?) -> TestRecord {
        var copy = self
        copy.headers.append(RecordHeader(name: name, value: value.map { Array($0.utf8) }))
        return copy
    }

    /// The record with the UTF-8 bytes of `text` as its value (a tombstone when nil).
    public func payload(_ text: String?) -> TestRecord {
        var copy = self
        copy.value = text.map { Array($0.utf8) }
        return copy
    }

    /// The record keyed by the UTF-8 bytes of `key` (Kafka's null key when nil).
    public func key(_ key: String?) -> TestRecord {
        var copy = self
        copy.key = key.map { Array($0.utf8) }
        return copy
    }

    /// The record as the validator and the rules read it, from ``source``.
    public var requestRecord: RequestRecord {
        RequestRecord(key: key, headers: headers, value: value, source: source)
    }

    /// The record to produce to `topic` (``source``'s topic unless given), the partitioner choosing
    /// its partition by key.
    public func producerRecord(topic: String? = nil) -> ProducerRecord {
        ProducerRecord(topic: topic ?? source.topic, key: key, value: value, headers: headers)
    }
}
