import BlockingWork
package import Logging
import Synchronization

/// librdkafka's mock cluster: a real Kafka protocol server on loopback, for tests and local work.
///
/// Brokers have IDs `1...brokers`. Limits of librdkafka 2.0.2's mock: it keeps about 5 MiB per
/// partition (older data silently goes), has no topic configurations (so no compaction: `config`
/// given to ``createTopic(_:partitions:config:)`` is not kept), waits `session.timeout.ms` − 1 s before
/// every rebalance after the first, and holds an empty fetch for `fetch.wait.max.ms`.
package final class EmbeddedKafkaCluster: Sendable {
    /// The mock cluster and the handle it lives in; nil after ``shutdown()``.
    private let cluster: Mutex<RDKafkaMockCluster?>
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
        let cluster = try RDKafkaMockCluster(brokers: Int32(brokers), logger: logger)
        bootstrapServers = cluster.bootstrapServers
        brokerCount = brokers
        self.cluster = Mutex(cluster)
    }

    /// Creates a topic with `partitions` partitions, replicated over up to three brokers.
    ///
    /// - Parameter config: Accepted for symmetry with real clusters; the 2.0.2 mock keeps no topic configurations.
    package func createTopic(_ name: String, partitions: Int32, config: [String: String] = [:]) throws(KafkaError) {
        let replication = Int32(min(brokerCount, 3))
        try withCluster { (cluster) throws(KafkaError) in try cluster.createTopic(name, partitions: partitions, replication: replication) }
    }

    /// Creates every topic of `specifications` (replication and configuration as for ``createTopic(_:partitions:config:)``).
    package func createTopics(_ specifications: [TopicSpecification]) throws(KafkaError) {
        for specification in specifications {
            try createTopic(specification.name, partitions: specification.partitions, config: specification.config)
        }
    }

    /// Takes broker `brokerID` down: its connections close and it accepts none until ``setBrokerUp(_:)``.
    package func setBrokerDown(_ brokerID: Int32) throws(KafkaError) {
        try withCluster { (cluster) throws(KafkaError) in try cluster.setBrokerDown(brokerID) }
    }

    /// Brings broker `brokerID` back up.
    package func setBrokerUp(_ brokerID: Int32) throws(KafkaError) {
        try withCluster { (cluster) throws(KafkaError) in try cluster.setBrokerUp(brokerID) }
    }

    /// Delays every response of broker `broker` by `delay`.
    package func setRoundTripDelay(broker: Int32, _ delay: Duration) throws(KafkaError) {
        try withCluster { (cluster) throws(KafkaError) in try cluster.setRoundTripDelay(broker: broker, milliseconds: delay.clampedMilliseconds) }
    }

    /// Makes the next requests of API `apiKey` (such as 0, Produce) fail with `errorCodes`, one per request.
    package func pushRequestErrors(apiKey: Int16, _ errorCodes: [Int32]) throws(KafkaError) {
        try withCluster { $0.pushRequestErrors(apiKey: apiKey, errorCodes) }
    }

    /// Makes the next request of API `apiKey` (such as 0, Produce) that broker `broker` receives
    /// end with `errorCode` (0: it succeeds), its response held back for `roundTrip`.
    ///
    /// The request itself is carried out at once (a produced record is in the log, readable by
    /// others): only its answer waits, and the answers after it on the same connection with it.
    package func pushRequestError(broker: Int32, apiKey: Int16, _ errorCode: Int32 = 0, roundTrip: Duration) throws(KafkaError) {
        try withCluster { (cluster) throws(KafkaError) in
            try cluster.pushRequestError(broker: broker, apiKey: apiKey, errorCode, milliseconds: roundTrip.clampedMilliseconds)
        }
    }

    /// Makes broker `broker` the coordinator of consumer group `group` (otherwise the group's id
    /// picks one), so that a test can take other brokers down without taking the group with them.
    package func setGroupCoordinator(_ group: String, broker: Int32) throws(KafkaError) {
        try withCluster { (cluster) throws(KafkaError) in try cluster.setGroupCoordinator(group, broker: broker) }
    }

    /// Makes broker `broker` the leader of `topic`'s partition `partition` (tests pick the broker to fail this way).
    package func setPartitionLeader(topic: String, partition: Int32, broker: Int32) throws(KafkaError) {
        try withCluster { (cluster) throws(KafkaError) in try cluster.setPartitionLeader(topic: topic, partition: partition, broker: broker) }
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
            let client = try RDKafkaClient(.producer, config: config, context: ClientContext(logger: Logger(label: "kafka.embedded.metadata")))
            return client.leader(topic: topic, partition: partition, milliseconds: milliseconds)
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

    /// Runs `body` with the mock cluster under the lock, or throws when shut down.
    private func withCluster<T>(_ body: (RDKafkaMockCluster) throws(KafkaError) -> T) throws(KafkaError) -> T {
        try cluster.withLock { (cluster) throws(KafkaError) -> T in
            guard let cluster else { throw KafkaError.shutDown("embedded cluster") }
            return try body(cluster)
        }
    }
}
