internal import CRdKafka

/// Owns an `rd_kafka_conf_t` until `rd_kafka_new` succeeds with it.
///
/// Ownership: `rd_kafka_new` takes the conf only when it succeeds; on failure it is still ours,
/// so ``relinquish()`` is called only after a successful `rd_kafka_new` and `deinit` frees it otherwise.
final class RDKafkaConfig {
    /// The conf, or nil once a handle owns it.
    private(set) var pointer: OpaquePointer?

    /// Creates an empty librdkafka configuration.
    init() {
        pointer = rd_kafka_conf_new()
    }

    deinit {
        if let pointer { rd_kafka_conf_destroy(pointer) }
    }

    /// Sets one librdkafka property, throwing librdkafka's own explanation when it is rejected.
    func set(_ name: String, _ value: String) throws(KafkaError) {
        guard let pointer else { throw KafkaError.invalidConfiguration("configuration already handed to a client") }
        let capacity = 512
        var reason = [CChar](repeating: 0, count: capacity)
        let result = rd_kafka_conf_set(pointer, name, value, &reason, capacity)
        guard result == RD_KAFKA_CONF_OK else {
            let explanation = String(cBuffer: reason)
            throw KafkaError.invalidConfiguration("\(name): \(explanation)")
        }
    }

    /// Sets every property of `properties` in a stable (sorted) order.
    func set(_ properties: [String: String]) throws(KafkaError) {
        for (name, value) in properties.sorted(by: { $0.key < $1.key }) {
            try set(name, value)
        }
    }

    /// Forgets the conf because a handle created from it now owns it.
    func relinquish() {
        pointer = nil
    }
}
