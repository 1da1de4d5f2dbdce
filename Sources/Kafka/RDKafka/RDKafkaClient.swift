internal import CRdKafka

/// Owns one `rd_kafka_t` handle and the retained context its C callbacks see.
///
/// Ownership: the handle is destroyed in `deinit`, then the context is released, so no callback can
/// outlive its context. A consumer's queue reference is destroyed before the handle.
///
/// The rest of the Kafka module calls librdkafka only through this type's methods (its extensions
/// in `RDKafka/`, one per concern) and the other owners of this folder; ``handle`` is for them.
final class RDKafkaClient: @unchecked Sendable {
    // @unchecked Sendable: `handle` and `consumerQueue` are immutable after init and librdkafka's
    // handle API is thread-safe; whoever holds a reference may call it from any thread.

    /// What kind of client a handle is (`rd_kafka_type_t`).
    enum Kind {
        /// A producer (also what admin requests, metadata requests and the mock cluster run in).
        case producer
        /// A consumer: its main queue is routed to the consumer queue.
        case consumer
    }

    /// The librdkafka handle; used by the files of `RDKafka/` only.
    let handle: OpaquePointer
    /// `rd_kafka_queue_get_consumer` for consumers (a reference we must destroy), else nil.
    let consumerQueue: OpaquePointer?
    /// The context retained for the handle's callbacks; released after `rd_kafka_destroy`.
    private let context: Unmanaged<ClientContext>

    /// Creates a handle from `config` (which it then owns) with `context` as its callbacks' opaque.
    ///
    /// For consumers it also routes the main queue to the consumer queue (`rd_kafka_poll_set_consumer`)
    /// so that one `rd_kafka_consumer_poll` serves messages, rebalances, statistics and errors.
    init(_ kind: Kind, config: RDKafkaConfig, context: ClientContext) throws(KafkaError) {
        config.routeLogs()
        let retained = Unmanaged.passRetained(context)
        rd_kafka_conf_set_opaque(config.pointer, retained.toOpaque())
        let capacity = 512
        var reason = [CChar](repeating: 0, count: capacity)
        let type = kind == .consumer ? RD_KAFKA_CONSUMER : RD_KAFKA_PRODUCER
        guard let handle = rd_kafka_new(type, config.pointer, &reason, capacity) else {
            retained.release()
            let explanation = String(cBuffer: reason)
            throw KafkaError.invalidConfiguration(explanation)
        }
        config.relinquish()
        self.handle = handle
        self.context = retained
        if kind == .consumer {
            rd_kafka_poll_set_consumer(handle)
            consumerQueue = rd_kafka_queue_get_consumer(handle)
        } else {
            consumerQueue = nil
        }
    }

    deinit {
        if let consumerQueue { rd_kafka_queue_destroy(consumerQueue) }
        rd_kafka_destroy(handle)
        context.release()
    }

    /// Wakes a thread blocked in a poll or flush of this handle (`rd_kafka_yield`).
    func yield() {
        rd_kafka_yield(handle)
    }

    /// Serves the handle's main queue (callbacks, delivery reports) for up to `milliseconds`
    /// (`rd_kafka_poll`; blocks: never on the cooperative pool).
    func poll(milliseconds: Int32) {
        rd_kafka_poll(handle, milliseconds)
    }
}
