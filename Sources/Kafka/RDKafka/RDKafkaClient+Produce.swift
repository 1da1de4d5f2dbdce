internal import CRdKafka
import Records

extension RDKafkaClient {
    /// Enqueues `record` with `opaque` as its message opaque (handed back in the delivery report).
    ///
    /// Key, value and headers are copied by librdkafka (`RD_KAFKA_MSG_F_COPY`), so nothing here
    /// outlives the call. Returns the error when librdkafka did not take the record (then no delivery
    /// report will come for it).
    func produce(_ record: ProducerRecord, opaque: UnsafeMutableRawPointer) -> KafkaError? {
        let headers = record.headers.isEmpty ? nil : Self.makeHeaders(record.headers)
        let error: OpaquePointer? = record.topic.withCString { topic in
            withBytesOrNull(record.key) { key, keyCount in
                withBytesOrNull(record.value) { value, valueCount in
                    withUnsafeTemporaryAllocation(of: rd_kafka_vu_t.self, capacity: 7) { arguments in
                        var count = 0
                        func append(_ type: rd_kafka_vtype_t, _ fill: (inout rd_kafka_vu_t) -> Void) {
                            var argument = rd_kafka_vu_t()
                            argument.vtype = type
                            fill(&argument)
                            arguments[count] = argument
                            count += 1
                        }
                        append(RD_KAFKA_VTYPE_TOPIC) { $0.u.cstr = topic }
                        append(RD_KAFKA_VTYPE_PARTITION) { $0.u.i32 = record.partition ?? -1 }  // -1: RD_KAFKA_PARTITION_UA
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
                }
            }
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
}

/// Lends `bytes` as a pointer and count: NULL for `nil` (Kafka's null), a valid pointer for empty bytes.
func withBytesOrNull<T>(_ bytes: RecordBytes?, _ body: (UnsafeRawPointer?, Int) -> T) -> T {
    guard let bytes else { return body(nil, 0) }
    if bytes.isEmpty {
        // An empty view may have no storage; librdkafka tells empty from null by the pointer.
        let placeholder: UInt8 = 0
        return withUnsafePointer(to: placeholder) { body(UnsafeRawPointer($0), 0) }
    }
    return bytes.withUnsafeBytes { body($0.baseAddress, $0.count) }
}
