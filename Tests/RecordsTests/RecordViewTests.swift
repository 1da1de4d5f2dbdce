import Records
import Testing

/// `RecordView`, a record lent in place: what it reads is the lender's bytes, a null key or value
/// and a null header value told from empty ones, and the record's position.
@Suite("RecordView")
struct RecordViewTests {
    /// What a view showed, copied out of it.
    struct Seen: Equatable {
        var key: [UInt8]?
        var value: [UInt8]?
        var headers: [(name: [UInt8], value: [UInt8]?)]
        var topic: String
        var position: TopicPartitionOffset
        var timestampMilliseconds: Int64?

        static func == (left: Seen, right: Seen) -> Bool {
            left.key == right.key && left.value == right.value && left.topic == right.topic
                && left.position == right.position && left.timestampMilliseconds == right.timestampMilliseconds
                && left.headers.map(\.name) == right.headers.map(\.name) && left.headers.map(\.value) == right.headers.map(\.value)
        }
    }

    /// A record's parts, lent as a view by ``lend(_:_:)``.
    struct Parts: Sendable {
        var key: [UInt8]?
        var value: [UInt8]?
        var headers: [(name: String, value: [UInt8]?)]
        var topic = "notifications.requests"
        var partition: Int32 = 2
        var offset: Int64 = 41
        var timestampMilliseconds: Int64? = 1_700_000_000_123
    }

    /// Lays `parts` out in one buffer, one part after another (as a consumed message's lie in
    /// librdkafka's memory), and calls `body` with a view of them.
    static func lend<Result>(_ parts: Parts, _ body: (borrowing RecordView) -> Result) -> Result {
        var laidOut: [UInt8] = Array(parts.topic.utf8)
        var ranges: [Range<Int>?] = []
        func append(_ bytes: [UInt8]?) {
            guard let bytes else { return ranges.append(nil) }
            ranges.append(laidOut.count..<laidOut.count + bytes.count)
            laidOut += bytes
        }
        append(parts.key)
        append(parts.value)
        for header in parts.headers {
            append(Array(header.name.utf8))
            append(header.value)
        }
        // One byte more, so that a part at the end has an address even when empty.
        laidOut.append(0)
        let topicCount = parts.topic.utf8.count
        return laidOut.withUnsafeBytes { bytes in
            func part(_ range: Range<Int>?) -> UnsafeRawBufferPointer? {
                range.map { UnsafeRawBufferPointer(rebasing: bytes[$0]) }
            }
            let headers = parts.headers.indices.map { index in
                LentHeader(name: part(ranges[2 + 2 * index])!, value: part(ranges[3 + 2 * index]))
            }
            return headers.withUnsafeBufferPointer { lent in
                let view = RecordView(
                    key: part(ranges[0]), value: part(ranges[1]), headers: lent,
                    topic: UnsafeRawBufferPointer(rebasing: bytes[0..<topicCount]), partition: parts.partition, offset: parts.offset,
                    timestampMilliseconds: parts.timestampMilliseconds, owner: bytes)
                return body(view)
            }
        }
    }

    /// The bytes of `span`, nil when there is none.
    static func copy(_ span: RawSpan?) -> [UInt8]? {
        guard let span else { return nil }
        return span.withUnsafeBytes { Array($0) }
    }

    /// Everything `view` shows, through its spans.
    static func seen(_ view: borrowing RecordView) -> Seen {
        var headers: [(name: [UInt8], value: [UInt8]?)] = []
        for index in 0..<view.headerCount {
            headers.append((copy(view.headerName(index)) ?? [], copy(view.headerValue(index))))
        }
        return Seen(
            key: copy(view.key), value: copy(view.value), headers: headers, topic: view.topic, position: view.position,
            timestampMilliseconds: view.timestampMilliseconds)
    }

    @Test("reads the lender's key, value, headers in order, topic, partition, offset and timestamp")
    func readsEveryPart() {
        let parts = Parts(
            key: Array("0123abcd".utf8), value: Array(#"{"aps":{"alert":"Hello"}}"#.utf8),
            headers: [("apns-topic", Array("com.example.app".utf8)), ("APNS-ID", Array("x".utf8)), ("apns-topic", Array("again".utf8))])
        let seen = Self.lend(parts) { Self.seen($0) }
        #expect(
            seen
                == Seen(
                    key: Array("0123abcd".utf8), value: Array(#"{"aps":{"alert":"Hello"}}"#.utf8),
                    headers: [
                        (Array("apns-topic".utf8), Array("com.example.app".utf8)), (Array("APNS-ID".utf8), Array("x".utf8)),
                        (Array("apns-topic".utf8), Array("again".utf8)),
                    ],
                    topic: "notifications.requests",
                    position: TopicPartitionOffset(topic: "notifications.requests", partition: 2, offset: 41),
                    timestampMilliseconds: 1_700_000_000_123))
    }

    @Test("a null key, a tombstone and a header without a value are nil; empty ones are empty, not nil")
    func nullIsNotEmpty() {
        let null = Self.lend(Parts(key: nil, value: nil, headers: [("apns-priority", nil)], timestampMilliseconds: nil)) { Self.seen($0) }
        #expect(null.key == nil)
        #expect(null.value == nil)
        #expect(null.headers.count == 1 && null.headers[0].value == nil)
        #expect(null.timestampMilliseconds == nil)
        let empty = Self.lend(Parts(key: [], value: [], headers: [("apns-priority", [])])) { Self.seen($0) }
        #expect(empty.key == [])
        #expect(empty.value == [])
        #expect(empty.headers.count == 1 && empty.headers[0].value == [])
    }

    @Test("the unsafe accessors read the same bytes where they lie")
    func unsafeAccessors() {
        let parts = Parts(key: Array("k".utf8), value: nil, headers: [("h", Array("v".utf8))], topic: "t")
        let (topic, key, value, header, count) = Self.lend(parts) { view in
            (
                view.withUnsafeTopicBytes { Array($0) },
                view.withUnsafeKeyBytes { $0.map { Array($0) } },
                view.withUnsafeValueBytes { $0.map { Array($0) } },
                view.withUnsafeHeaderBytes(0) { name, value in (Array(name), value.map { Array($0) }) },
                view.withUnsafeHeaders { $0.count }
            )
        }
        #expect(topic == Array("t".utf8))
        #expect(key == Array("k".utf8))
        #expect(value == nil)
        #expect(header.0 == Array("h".utf8) && header.1 == Array("v".utf8))
        #expect(count == 1)
    }

    @Test(
        "a RecordCopy shows what the view it copied showed, once the lender is gone",
        arguments: [
            Parts(
                key: Array("0123abcd".utf8), value: Array(#"{"aps":{"alert":"Hello"}}"#.utf8),
                headers: [("apns-topic", Array("com.example.app".utf8)), ("APNS-ID", Array("x".utf8)), ("apns-topic", Array("again".utf8))]),
            Parts(key: nil, value: nil, headers: [("apns-priority", nil)], timestampMilliseconds: nil),
            Parts(key: [], value: [], headers: [("", []), ("e", [])], topic: "t"),
            Parts(key: Array("k".utf8), value: Array("v".utf8), headers: [], topic: "odd", partition: 0, offset: 0),
        ])
    func copyShowsTheSameParts(parts: Parts) {
        let (copy, lent) = Self.lend(parts) { view in (RecordCopy.copying(view, topic: parts.topic), Self.seen(view)) }
        #expect(copy.withView { Self.seen($0) } == lent)
        #expect(copy.topic == parts.topic && copy.partition == parts.partition && copy.offset == parts.offset)
        #expect(copy.timestampMilliseconds == parts.timestampMilliseconds)
        // Its header table is aligned, whatever the lengths of the parts laid out after it.
        copy.withView { view in
            view.withUnsafeHeaders { headers in
                #expect(Int(bitPattern: headers.baseAddress) % MemoryLayout<LentHeader>.alignment == 0)
            }
        }
    }
}
