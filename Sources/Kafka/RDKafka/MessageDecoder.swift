internal import CRdKafka
import Foundation
import Records

/// Copies librdkafka messages into ``KafkaMessage`` values; used only by one poll thread.
///
/// Remembers each topic handle's name so that a batch does not allocate a topic string per message
/// (topic handles live as long as the client), and the header names it has seen, so that a
/// header's name is not a new string per record either (a topic's records repeat a handful of
/// names; one of 16 bytes or more, such as `apns-collapse-id`, would be an allocation each time).
struct MessageDecoder {
    /// Topic names by topic handle.
    private var topicNames: [OpaquePointer: String] = [:]
    /// Header names seen so far, as bytes and as the string handed out, up to ``maxHeaderNames``:
    /// past that, names are decoded each time (memory is bounded whatever the input).
    private var headerNames: [(bytes: [UInt8], name: String)] = []
    /// How many header names are remembered. A linear search of a few entries costs less than
    /// hashing a name; the product reads about ten.
    static let maxHeaderNames = 32

    /// Copies one message into one buffer (a NULL key, value or header value stays nil:
    /// tombstones never crash), naming its headers with the names seen before.
    mutating func decode(_ message: RDKafkaMessage) -> KafkaMessage {
        let topic = topicName(message.topicHandle)
        return Self.copy(message, topic: topic) { headerName($0) }
    }

    /// Copies one message into one buffer.
    ///
    /// The key, the value and every header value are views (``RecordBytes``) of that buffer, in
    /// that order, so a record is one allocation for its bytes, one for its header list and one
    /// for its fields, whatever its number of headers (before, each part was an array of its own).
    /// The buffer is sized first (a walk of the headers) and filled in one pass; the views are
    /// taken after, walking the same parts again.
    /// - Parameter name: the string of a header name (by default a well-known name's shared
    ///   string, else a new one).
    static func copy(
        _ message: RDKafkaMessage, topic: String,
        name: (UnsafePointer<CChar>) -> String = { knownHeaderName($0) }
    ) -> KafkaMessage {
        let headerList = message.headers
        let rawKey = message.key
        let rawValue = message.value
        var size = message.keyCount + message.valueCount
        if let headerList { headerList.forEach { _, _, valueSize in size += valueSize } }

        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            let buffer = UnsafeMutableRawBufferPointer(buffer)
            append(rawKey, to: buffer, at: &initialized)
            append(rawValue, to: buffer, at: &initialized)
            if let headerList {
                headerList.forEach { _, value, valueSize in
                    append(value.map { UnsafeRawBufferPointer(start: $0, count: valueSize) }, to: buffer, at: &initialized)
                }
            }
        }
        // The same walk again, now taking each part's view. The offset is passed, not captured
        // by a nested function: a capture is checked for exclusive access at run time, twice a part.
        var offset = 0
        let key = part(of: bytes, rawKey?.baseAddress, message.keyCount, at: &offset)
        let value = part(of: bytes, rawValue?.baseAddress, message.valueCount, at: &offset)
        var headers: [RecordHeader] = []
        if let headerList {
            headers.reserveCapacity(headerList.count)
            headerList.forEach { headerName, start, valueSize in
                headers.append(RecordHeader(name: headerName.map(name) ?? "", value: part(of: bytes, start, valueSize, at: &offset)))
            }
        }
        let timestamp = message.timestampMilliseconds.map { Date(timeIntervalSince1970: Double($0) / 1_000) }
        return KafkaMessage(
            topic: topic, partition: message.partition, offset: message.offset,
            key: key, value: value, headers: headers, timestamp: timestamp)
    }

    /// Copies the record `view` lends into one buffer, as ``copy(_:topic:name:)`` copies a
    /// message: the owned form of a record that was kept as a ``RecordCopy``.
    static func copy(_ view: borrowing RecordView, topic: String) -> KafkaMessage {
        view.withUnsafeHeaders { headerList in
            let rawKey = view.withUnsafeKeyBytes { $0 }
            let rawValue = view.withUnsafeValueBytes { $0 }
            var size = (rawKey?.count ?? 0) + (rawValue?.count ?? 0)
            for header in headerList { size += header.value?.count ?? 0 }
            let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
                let buffer = UnsafeMutableRawBufferPointer(buffer)
                append(rawKey, to: buffer, at: &initialized)
                append(rawValue, to: buffer, at: &initialized)
                for header in headerList { append(header.value, to: buffer, at: &initialized) }
            }
            var offset = 0
            let key = part(of: bytes, rawKey?.baseAddress, rawKey?.count ?? 0, at: &offset)
            let value = part(of: bytes, rawValue?.baseAddress, rawValue?.count ?? 0, at: &offset)
            let headers = headerList.map { header in
                RecordHeader(
                    name: knownHeaderName(header.name),
                    value: part(of: bytes, header.value?.baseAddress, header.value?.count ?? 0, at: &offset))
            }
            let timestamp = view.timestampMilliseconds.map { Date(timeIntervalSince1970: Double($0) / 1_000) }
            return KafkaMessage(
                topic: topic, partition: view.partition, offset: view.offset, key: key, value: value, headers: headers,
                timestamp: timestamp)
        }
    }

    /// Copies `part` (if any) into `buffer` at `offset`, moving `offset` past it.
    private static func append(_ part: UnsafeRawBufferPointer?, to buffer: UnsafeMutableRawBufferPointer, at offset: inout Int) {
        guard let part, !part.isEmpty else { return }
        UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<offset + part.count]).copyMemory(from: part)
        offset += part.count
    }

    /// The view of the part of `bytes` at `offset` (nil for a part without a pointer: a null key,
    /// value or header value), moving `offset` past it.
    private static func part(of bytes: [UInt8], _ start: UnsafeRawPointer?, _ count: Int, at offset: inout Int) -> RecordBytes? {
        guard start != nil else { return nil }
        defer { offset += count }
        return RecordBytes(bytes, range: offset..<offset + count)
    }

    /// The header names requests carry, as shared strings with their bytes: a copied record's
    /// names of 16 bytes or more (`apns-collapse-id`) are not a new string each.
    private static let knownHeaderNames: [(bytes: [UInt8], name: String)] = [
        "apns-topic", "apns-push-type", "apns-id", "apns-priority", "apns-expiration", "apns-collapse-id",
        "apns-channel-id", "apns-request-id", "app-state", "traceparent",
    ].map { (Array($0.utf8), $0) }

    /// The shared string of a well-known header name, else a new one.
    static func knownHeaderName(_ cString: UnsafePointer<CChar>) -> String {
        knownHeaderName(UnsafeRawBufferPointer(start: cString, count: strlen(cString)))
    }

    /// The shared string of a well-known header name given as bytes, else a new one.
    static func knownHeaderName(_ bytes: UnsafeRawBufferPointer) -> String {
        remembered(bytes, among: knownHeaderNames) ?? String(decoding: bytes, as: UTF8.self)
    }

    /// The string of `bytes` among `names`, compared with `memcmp`: `elementsEqual` between a
    /// string's UTF-8 view and raw bytes walks them a byte at a time through the collections'
    /// witnesses (about 640 instructions a header name, `bench counts` with 5,000 devices).
    private static func remembered(_ bytes: UnsafeRawBufferPointer, among names: [(bytes: [UInt8], name: String)]) -> String? {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return names.first { $0.bytes.isEmpty }?.name }
        for known in names where known.bytes.count == bytes.count {
            if known.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, base, bytes.count) }) == 0 { return known.name }
        }
        return nil
    }

    /// The topic name of a message's topic handle, cached.
    mutating func topicName(_ handle: OpaquePointer?) -> String {
        guard let handle else { return "" }
        if let name = topicNames[handle] { return name }
        let name = String(cString: rd_kafka_topic_name(handle))
        topicNames[handle] = name
        return name
    }

    /// The string of a header name: the remembered one when seen before.
    private mutating func headerName(_ cString: UnsafePointer<CChar>) -> String {
        let bytes = UnsafeRawBufferPointer(start: cString, count: strlen(cString))
        if let name = Self.remembered(bytes, among: headerNames) { return name }
        let name = String(decoding: bytes, as: UTF8.self)
        if headerNames.count < Self.maxHeaderNames { headerNames.append((Array(bytes), name)) }
        return name
    }
}
