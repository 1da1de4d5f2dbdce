internal import CRdKafka
import Logging

/// Owns one `rd_kafka_mock_cluster_t` and the producer handle it needs (the mock runs inside a
/// client); ``EmbeddedKafkaCluster`` keeps it under a lock.
///
/// Ownership: the cluster is destroyed in `deinit` before the handle (a stored property, released
/// after the body).
final class RDKafkaMockCluster: @unchecked Sendable {
    // @unchecked Sendable: `pointer` is immutable and only used under the owning Mutex.

    /// The mock cluster.
    private let pointer: OpaquePointer
    /// The handle the mock cluster lives in; must outlive it.
    private let client: RDKafkaClient
    /// The bootstrap address list.
    let bootstrapServers: String

    /// Creates a handle and a mock cluster of `brokers` brokers in it.
    init(brokers: Int32, logger: Logger) throws(KafkaError) {
        let config = RDKafkaConfig()
        // The hosting handle never connects anywhere; keep its "no bootstrap servers" notice quiet.
        try config.set("log_level", "3")
        client = try RDKafkaClient(.producer, config: config, context: ClientContext(logger: logger))
        guard let pointer = rd_kafka_mock_cluster_new(client.handle, brokers) else {
            throw KafkaError(RD_KAFKA_RESP_ERR__FAIL, message: "could not start the mock cluster")
        }
        self.pointer = pointer
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(pointer))
    }

    deinit {
        rd_kafka_mock_cluster_destroy(pointer)
    }

    /// Creates a topic of `partitions` partitions, each replicated `replication` times.
    func createTopic(_ name: String, partitions: Int32, replication: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_topic_create(pointer, name, partitions, replication), "creating topic \(name)")
    }

    /// Takes broker `brokerID` down: its connections close and it accepts none until ``setBrokerUp(_:)``.
    func setBrokerDown(_ brokerID: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_down(pointer, brokerID), "broker \(brokerID) down")
    }

    /// Brings broker `brokerID` back up.
    func setBrokerUp(_ brokerID: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_up(pointer, brokerID), "broker \(brokerID) up")
    }

    /// Delays every response of broker `broker` by `milliseconds`.
    func setRoundTripDelay(broker: Int32, milliseconds: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_rtt(pointer, broker, milliseconds), "broker \(broker) round-trip delay")
    }

    /// Makes the next requests of API `apiKey` fail with `errorCodes`, one per request.
    func pushRequestErrors(apiKey: Int16, _ errorCodes: [Int32]) {
        let errors = errorCodes.map { rd_kafka_resp_err_t(rawValue: $0) }
        errors.withUnsafeBufferPointer { buffer in
            rd_kafka_mock_push_request_errors_array(pointer, apiKey, buffer.count, buffer.baseAddress)
        }
    }

    /// Makes the next request of API `apiKey` that broker `broker` receives end with `errorCode`
    /// (0: it succeeds), its response held back for `milliseconds`.
    func pushRequestError(broker: Int32, apiKey: Int16, _ errorCode: Int32, milliseconds: Int32) throws(KafkaError) {
        try check(
            crdkafka_mock_broker_push_request_error_rtt(pointer, broker, apiKey, rd_kafka_resp_err_t(rawValue: errorCode), milliseconds),
            "request error of broker \(broker)")
    }

    /// Makes broker `broker` the coordinator of consumer group `group`.
    func setGroupCoordinator(_ group: String, broker: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_coordinator_set(pointer, "group", group, broker), "coordinator of group \(group)")
    }

    /// Makes broker `broker` the leader of `topic`'s partition `partition`.
    func setPartitionLeader(topic: String, partition: Int32, broker: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_partition_set_leader(pointer, topic, partition, broker), "leader of \(topic)[\(partition)]")
    }

    /// Throws `error`, explained by `what`, unless it is `NO_ERROR`.
    private func check(_ error: rd_kafka_resp_err_t, _ what: String) throws(KafkaError) {
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error, message: what) }
    }
}
