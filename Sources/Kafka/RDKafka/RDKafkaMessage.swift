internal import CRdKafka

/// One message librdkafka's consumer returned (`rd_kafka_message_t`), read where it lies.
///
/// Ownership: not an owner, a view as cheap to copy as the pointer it holds. Whoever took it from
/// ``RDKafkaClient/consumerPoll(milliseconds:)`` destroys it once (``destroy()``): the poll loop or
/// the restorer, or the ``ConsumedBatch`` it is lent in, whose `deinit` destroys its messages. An
/// owning class per message would be an allocation per record on the consume path, and a
/// noncopyable one cannot be kept in the arrays a batch is collected in. What it lends (its key,
/// value and headers) is valid until it is destroyed.
struct RDKafkaMessage {
    /// The message.
    private let pointer: UnsafeMutablePointer<rd_kafka_message_t>

    /// A view of a message librdkafka handed over.
    init(_ pointer: UnsafeMutablePointer<rd_kafka_message_t>) {
        self.pointer = pointer
    }

    /// What a polled message carries.
    enum Status {
        /// A record.
        case record
        /// The end of a partition (`enable.partition.eof`): ``offset`` is its end, the next
        /// offset to read.
        case partitionEnd
        /// An error (``error(message:)``).
        case failed
    }

    /// What the message carries.
    var status: Status {
        switch pointer.pointee.err {
        case RD_KAFKA_RESP_ERR_NO_ERROR: .record
        case RD_KAFKA_RESP_ERR__PARTITION_EOF: .partitionEnd
        default: .failed
        }
    }

    /// The error the message carries, explained by `message`, by default librdkafka's
    /// (`rd_kafka_message_errstr`).
    func error(message: String? = nil) -> KafkaError {
        KafkaError(pointer.pointee.err, message: message ?? String(cString: rd_kafka_message_errstr(pointer)))
    }

    /// Its topic's handle, which identifies the topic while the client lives (``MessageDecoder``
    /// names it).
    var topicHandle: OpaquePointer? { pointer.pointee.rkt }

    /// Its partition.
    var partition: Int32 { pointer.pointee.partition }

    /// Its offset.
    var offset: Int64 { pointer.pointee.offset }

    /// Its key's bytes, nil for a null key.
    var key: UnsafeRawBufferPointer? {
        pointer.pointee.key.map { UnsafeRawBufferPointer(start: $0, count: pointer.pointee.key_len) }
    }

    /// Its key's size (0 for a null key).
    var keyCount: Int { pointer.pointee.key_len }

    /// Its value's bytes, nil for a tombstone (librdkafka's payload pointer is NULL for one; an
    /// empty value has a pointer).
    var value: UnsafeRawBufferPointer? {
        pointer.pointee.payload.map { UnsafeRawBufferPointer(start: $0, count: pointer.pointee.len) }
    }

    /// Its value's size (0 for a tombstone).
    var valueCount: Int { pointer.pointee.len }

    /// Its timestamp in milliseconds since 1970, nil when it has none.
    var timestampMilliseconds: Int64? {
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let milliseconds = rd_kafka_message_timestamp(pointer, &timestampType)
        return milliseconds >= 0 ? milliseconds : nil
    }

    /// Its headers, nil when it has none. librdkafka parses them on the first call and keeps
    /// them with the message (`rd_kafka_message_headers`), so read them from one thread at a time.
    var headers: RDKafkaHeaders? {
        var list: OpaquePointer?
        guard rd_kafka_message_headers(pointer, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return nil }
        return RDKafkaHeaders(list: list)
    }

    /// Gives the message back to librdkafka (`rd_kafka_message_destroy`); once, by its taker.
    func destroy() {
        rd_kafka_message_destroy(pointer)
    }
}

/// A consumed message's headers (`rd_kafka_headers_t`), owned by the message: valid while it is.
struct RDKafkaHeaders {
    /// The message's header list.
    fileprivate let list: OpaquePointer

    /// How many headers there are.
    var count: Int { rd_kafka_header_cnt(list) }

    /// Calls `body` with each header's name, value (nil for a null value) and value size, in order.
    func forEach(_ body: (UnsafePointer<CChar>?, UnsafeRawPointer?, Int) -> Void) {
        var index = 0
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(list, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            body(name, value, size)
            index += 1
        }
    }
}
