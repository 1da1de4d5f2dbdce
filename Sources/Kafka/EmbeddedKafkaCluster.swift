import BlockingWork
package import Logging
import Synchronization
internal import CRdKafka

/// librdkafka's mock cluster: a real Kafka protocol server on loopback, for tests and local work.
///
/// Brokers have IDs `1...brokers`. Limits of librdkafka 2.0.2's mock: it keeps about 5 MiB per
/// partition (older data silently goes), has no topic configurations (so no compaction: `config`
/// given to ``createTopic(_:partitions:config:)`` is not kept), waits `session.timeout.ms` − 1 s before
/// every rebalance after the first, and holds an empty fetch for `fetch.wait.max.ms`.
package final class EmbeddedKafkaCluster: Sendable {
    /// The mock cluster and the handle it lives in; nil after ``shutdown()``.
    private let cluster: Mutex<MockCluster?>
    /// `host:port,...` of every broker, for `bootstrap.servers`.
    package let bootstrapServers: String
    /// How many brokers the cluster has (IDs `1...brokerCount`).
    package let brokerCount: Int

    /// Starts `brokers` brokers on loopback ports chosen by the system.
    ///
    /// - Throws: ``KafkaError`` when librdkafka cannot create the cluster.
    package init(brokers: Int = 3, logger: Logger = Logger(label: "kafka.embedded")) throws(KafkaError) {
        guard brokers >= 1, brokers <= 100 else {
            throw KafkaError.invalidConfiguration("broker count \(brokers) is outside 1...100")
        }
        let cluster = try MockCluster(brokers: Int32(brokers), logger: logger)
        bootstrapServers = cluster.bootstrapServers
        brokerCount = brokers
        self.cluster = Mutex(cluster)
    }

    /// Creates a topic with `partitions` partitions, replicated over up to three brokers.
    ///
    /// - Parameter config: Accepted for symmetry with real clusters; the 2.0.2 mock keeps no topic configurations.
    package func createTopic(_ name: String, partitions: Int32, config: [String: String] = [:]) throws(KafkaError) {
        let replication = Int32(min(brokerCount, 3))
        try withCluster { (pointer) throws(KafkaError) in
            let error = rd_kafka_mock_topic_create(pointer, name, partitions, replication)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error, message: "creating topic \(name)") }
        }
    }

    /// Creates every topic of `specifications` (replication and configuration as for ``createTopic(_:partitions:config:)``).
    package func createTopics(_ specifications: [TopicSpecification]) throws(KafkaError) {
        for specification in specifications {
            try createTopic(specification.name, partitions: specification.partitions, config: specification.config)
        }
    }

    /// Takes broker `brokerID` down: its connections close and it accepts none until ``setBrokerUp(_:)``.
    package func setBrokerDown(_ brokerID: Int32) throws(KafkaError) {
        try check(withCluster { rd_kafka_mock_broker_set_down($0, brokerID) }, "broker \(brokerID) down")
    }

    /// Brings broker `brokerID` back up.
    package func setBrokerUp(_ brokerID: Int32) throws(KafkaError) {
        try check(withCluster { rd_kafka_mock_broker_set_up($0, brokerID) }, "broker \(brokerID) up")
    }

    /// Delays every response of broker `broker` by `delay`.
    package func setRoundTripDelay(broker: Int32, _ delay: Duration) throws(KafkaError) {
        try check(withCluster { rd_kafka_mock_broker_set_rtt($0, broker, delay.clampedMilliseconds) }, "broker \(broker) round-trip delay")
    }

    /// Makes the next requests of API `apiKey` (such as 0, Produce) fail with `errorCodes`, one per request.
    package func pushRequestErrors(apiKey: Int16, _ errorCodes: [Int32]) throws(KafkaError) {
        let errors = errorCodes.map { rd_kafka_resp_err_t(rawValue: $0) }
        try withCluster { pointer in
            errors.withUnsafeBufferPointer { buffer in
                rd_kafka_mock_push_request_errors_array(pointer, apiKey, buffer.count, buffer.baseAddress)
            }
        }
    }

    /// Makes the next request of API `apiKey` (such as 0, Produce) that broker `broker` receives
    /// end with `errorCode` (0: it succeeds), its response held back for `roundTrip`.
    ///
    /// The request itself is carried out at once (a produced record is in the log, readable by
    /// others): only its answer waits, and the answers after it on the same connection with it.
    package func pushRequestError(broker: Int32, apiKey: Int16, _ errorCode: Int32 = 0, roundTrip: Duration) throws(KafkaError) {
        try check(
            withCluster {
                crdkafka_mock_broker_push_request_error_rtt(
                    $0, broker, apiKey, rd_kafka_resp_err_t(rawValue: errorCode), roundTrip.clampedMilliseconds)
            },
            "request error of broker \(broker)")
    }

    /// Makes broker `broker` the coordinator of consumer group `group` (otherwise the group's id
    /// picks one), so that a test can take other brokers down without taking the group with them.
    package func setGroupCoordinator(_ group: String, broker: Int32) throws(KafkaError) {
        try check(withCluster { rd_kafka_mock_coordinator_set($0, "group", group, broker) }, "coordinator of group \(group)")
    }

    /// Makes broker `broker` the leader of `topic`'s partition `partition` (tests pick the broker to fail this way).
    package func setPartitionLeader(topic: String, partition: Int32, broker: Int32) throws(KafkaError) {
        try check(withCluster { rd_kafka_mock_partition_set_leader($0, topic, partition, broker) }, "leader of \(topic)[\(partition)]")
    }

    /// The broker currently leading `topic`'s partition `partition`, asked through a metadata request
    /// from a short-lived client on a thread of its own; nil when the partition does not exist.
    package func leader(topic: String, partition: Int32, timeout: Duration = .seconds(10)) async throws(KafkaError) -> Int32? {
        let bootstrapServers = self.bootstrapServers
        let milliseconds = timeout.clampedMilliseconds
        let result: Result<Int32?, KafkaError> = await BlockingWork.run(onThreadNamed: "kafka-embedded-metadata") {
            Self.leader(topic: topic, partition: partition, bootstrapServers: bootstrapServers, milliseconds: milliseconds)
        }
        return try result.get()
    }

    /// Asks the cluster for a partition's leader (blocking: dedicated thread only).
    private static func leader(topic: String, partition: Int32, bootstrapServers: String, milliseconds: Int32) -> Result<Int32?, KafkaError> {
        do {
            let config = RDKafkaConfig()
            try config.set("bootstrap.servers", bootstrapServers)
            try config.set("log_level", "3")
            let client = try RDKafkaClient(type: RD_KAFKA_PRODUCER, config: config, context: ClientContext(logger: Logger(label: "kafka.embedded.metadata")))
            guard let topicHandle = rd_kafka_topic_new(client.handle, topic, nil) else {
                return .failure(KafkaError(rd_kafka_last_error(), message: "topic handle for \(topic)"))
            }
            defer { rd_kafka_topic_destroy(topicHandle) }
            var metadata: UnsafePointer<rd_kafka_metadata>?
            let error = rd_kafka_metadata(client.handle, 0, topicHandle, &metadata, milliseconds)
            guard error == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else { return .failure(KafkaError(error, message: "metadata for \(topic)")) }
            defer { rd_kafka_metadata_destroy(metadata) }
            for topicIndex in 0..<Int(metadata.pointee.topic_cnt) {
                let described = metadata.pointee.topics[topicIndex]
                for partitionIndex in 0..<Int(described.partition_cnt) where described.partitions[partitionIndex].id == partition {
                    return .success(described.partitions[partitionIndex].leader)
                }
            }
            return .success(nil)
        } catch {
            return .failure(error)
        }
    }

    /// Stops every broker and frees the cluster; later calls throw.
    package func shutdown() {
        let cluster = self.cluster.withLock { cluster in
            let taken = cluster
            cluster = nil
            return taken
        }
        _ = cluster  // freed here, outside the lock
    }

    /// Lends the mock cluster pointer to `body`, or throws when shut down.
    private func withCluster<T>(_ body: (OpaquePointer) throws(KafkaError) -> T) throws(KafkaError) -> T {
        try cluster.withLock { (cluster) throws(KafkaError) -> T in
            guard let cluster else { throw KafkaError.shutDown("embedded cluster") }
            return try body(cluster.pointer)
        }
    }

    /// Throws `error` unless it is `NO_ERROR`.
    private func check(_ error: rd_kafka_resp_err_t, _ what: String) throws(KafkaError) {
        guard error == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(error, message: what) }
    }
}

/// Owns one `rd_kafka_mock_cluster_t` and the producer handle it needs (the mock runs inside a client).
///
/// Ownership: the cluster is destroyed in `deinit` before the handle (stored property, freed after the body).
private final class MockCluster: @unchecked Sendable {
    // @unchecked Sendable: `pointer` is immutable and only used under the owning Mutex.

    /// The mock cluster.
    let pointer: OpaquePointer
    /// The handle the mock cluster lives in; must outlive it.
    private let client: RDKafkaClient
    /// The bootstrap address list.
    let bootstrapServers: String

    /// Creates a handle and a mock cluster of `brokers` brokers in it.
    init(brokers: Int32, logger: Logger) throws(KafkaError) {
        let config = RDKafkaConfig()
        // The hosting handle never connects anywhere; keep its "no bootstrap servers" notice quiet.
        try config.set("log_level", "3")
        client = try RDKafkaClient(type: RD_KAFKA_PRODUCER, config: config, context: ClientContext(logger: logger))
        guard let pointer = rd_kafka_mock_cluster_new(client.handle, brokers) else {
            throw KafkaError(RD_KAFKA_RESP_ERR__FAIL, message: "could not start the mock cluster")
        }
        self.pointer = pointer
        bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(pointer))
    }

    deinit {
        rd_kafka_mock_cluster_destroy(pointer)
    }
}
