internal import CRdKafka
import Records

/// Producing (`rd_kafka_produceva`): a ``ProducerRecord`` (``KafkaProducer/send(_:)-(Array<ProducerRecord>)``)
/// or bytes lent for the call (``LentOutputs``), both through one builder of the call's arguments.
extension RDKafkaClient {
    /// Enqueues `record` with `opaque` as its message opaque (handed back in the delivery report).
    ///
    /// Key, value and headers are copied by librdkafka (`RD_KAFKA_MSG_F_COPY`), so nothing here
    /// outlives the call. Returns the error when librdkafka did not take the record (then no delivery
    /// report will come for it).
    func produce(_ record: ProducerRecord, opaque: UnsafeMutableRawPointer) -> KafkaError? {
        let headers = record.headers.isEmpty ? nil : Self.makeHeaders(record.headers)
        return record.topic.withCString { topic in
            withBytesOrNull(record.key) { key, keyCount in
                withBytesOrNull(record.value) { value, valueCount in
                    produce(
                        to: .name(topic), partition: record.partition, key: key, keyCount: keyCount, value: value,
                        valueCount: valueCount, headers: headers, opaque: opaque)
                }
            }
        }
    }

    /// Enqueues one record from lent bytes, copied by librdkafka (`RD_KAFKA_MSG_F_COPY`); the
    /// error when librdkafka did not take it (then no delivery report will come for it).
    /// - Parameters:
    ///   - partition: nil lets the partitioner choose by key.
    ///   - key: nil is Kafka's null key.
    ///   - value: nil is a tombstone.
    func produce(
        topic: ProducerTopic, partition: Int32?, key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer?,
        headers: UnsafeBufferPointer<LentHeader>, opaque: UnsafeMutableRawPointer
    ) -> KafkaError? {
        var list: OpaquePointer?
        if !headers.isEmpty {
            list = rd_kafka_headers_new(headers.count)
            for header in headers {
                _ = rd_kafka_header_add(
                    list, header.name.baseAddress?.assumingMemoryBound(to: CChar.self), header.name.count,
                    header.value.map { $0.baseAddress ?? Self.emptyBytes }, header.value?.count ?? 0)
            }
        }
        // librdkafka tells an empty key or value from a null one by the pointer.
        return produce(
            to: .handle(topic.handle), partition: partition, key: key.map { $0.baseAddress ?? Self.emptyBytes },
            keyCount: key?.count ?? 0, value: value.map { $0.baseAddress ?? Self.emptyBytes }, valueCount: value?.count ?? 0,
            headers: list, opaque: opaque)
    }

    /// Where a record goes: a topic by name, or a topic handle made before (no lookup by name).
    private enum Destination {
        case name(UnsafePointer<CChar>)
        case handle(OpaquePointer)
    }

    /// The one `rd_kafka_produceva` call: `headers` (a list the caller made, or nil) is librdkafka's
    /// when the record is taken, and destroyed here when it is not.
    ///
    /// `@inline(__always)`: each of its two callers gets its own copy, with `destination` a
    /// constant and its switch folded away, as when each caller built the arguments itself (the
    /// lent path is the worker's produce path, counted per record by `bench counts`).
    @inline(__always)
    private func produce(
        to destination: Destination, partition: Int32?, key: UnsafeRawPointer?, keyCount: Int, value: UnsafeRawPointer?,
        valueCount: Int, headers: OpaquePointer?, opaque: UnsafeMutableRawPointer
    ) -> KafkaError? {
        let error: OpaquePointer? = withUnsafeTemporaryAllocation(of: rd_kafka_vu_t.self, capacity: 7) { arguments in
            var count = 0
            func append(_ type: rd_kafka_vtype_t, _ fill: (inout rd_kafka_vu_t) -> Void) {
                var argument = rd_kafka_vu_t()
                argument.vtype = type
                fill(&argument)
                arguments[count] = argument
                count += 1
            }
            switch destination {
            case .name(let topic): append(RD_KAFKA_VTYPE_TOPIC) { $0.u.cstr = topic }
            case .handle(let topic): append(RD_KAFKA_VTYPE_RKT) { $0.u.rkt = topic }
            }
            append(RD_KAFKA_VTYPE_PARTITION) { $0.u.i32 = partition ?? -1 }  // -1: RD_KAFKA_PARTITION_UA
            append(RD_KAFKA_VTYPE_KEY) {
                $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: key)
                $0.u.mem.size = keyCount
            }
            append(RD_KAFKA_VTYPE_VALUE) {
                $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: value)
                $0.u.mem.size = valueCount
            }
            append(RD_KAFKA_VTYPE_OPAQUE) { $0.u.ptr = opaque }
            append(RD_KAFKA_VTYPE_MSGFLAGS) { $0.u.i = RD_KAFKA_MSG_F_COPY }
            if let headers {
                append(RD_KAFKA_VTYPE_HEADERS) { $0.u.headers = headers }
            }
            return rd_kafka_produceva(handle, arguments.baseAddress, count)
        }
        guard let error else { return nil }
        // librdkafka owns the headers only when produceva succeeds.
        if let headers { rd_kafka_headers_destroy(headers) }
        return KafkaError(consuming: error)
    }

    /// A new `rd_kafka_headers_t` with copies of `headers` (the caller owns it until produce succeeds).
    private static func makeHeaders(_ headers: [RecordHeader]) -> OpaquePointer? {
        let list = rd_kafka_headers_new(headers.count)
        for header in headers {
            header.name.withCString { name in
                withBytesOrNull(header.value) { value, valueCount in
                    _ = rd_kafka_header_add(list, name, header.name.utf8.count, value, valueCount)
                }
            }
        }
        return list
    }

    /// Where an empty part points: librdkafka tells empty from null by the pointer, and an empty
    /// buffer may have none. Never read (its length is 0).
    /// `nonisolated(unsafe)`: a pointer set once, never written through and never read.
    nonisolated(unsafe) private static let emptyBytes = UnsafeRawPointer(UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1))
}

/// Lends `bytes` as a pointer and count: NULL for `nil` (Kafka's null), a valid pointer for empty bytes.
private func withBytesOrNull<T>(_ bytes: RecordBytes?, _ body: (UnsafeRawPointer?, Int) -> T) -> T {
    guard let bytes else { return body(nil, 0) }
    if bytes.isEmpty {
        // An empty view may have no storage; librdkafka tells empty from null by the pointer.
        let placeholder: UInt8 = 0
        return withUnsafePointer(to: placeholder) { body(UnsafeRawPointer($0), 0) }
    }
    return bytes.withUnsafeBytes { body($0.baseAddress, $0.count) }
}
