import Dispatcher
import DispatcherService
import Kafka
import Logging
import TestSupport

/// The broker a ``Pipeline`` runs on: librdkafka's in-process mock cluster (the fast tests), or a
/// Tansu process, a real Kafka-protocol broker (the real-broker suite). The pipeline owns it and
/// stops it in ``Pipeline/shutdown()``.
enum TestBroker: Sendable {
    /// librdkafka's mock cluster, in the test process.
    case embedded(EmbeddedKafkaCluster)
    /// A Tansu broker, a process of its own on a loopback port.
    case tansu(TansuBroker)

    /// Starts a Tansu broker on a free loopback port (scripts/install-tansu installs it).
    static func tansu() async throws -> TestBroker {
        .tansu(try await TansuBroker.start())
    }

    /// Starts a Tansu broker where `placement` says: in a network namespace of a ``NetworkLab``.
    static func tansu(placement: TansuBroker.Placement) async throws -> TestBroker {
        .tansu(try await TansuBroker.start(placement: placement))
    }

    /// `host:port,...` for `bootstrap.servers`.
    var bootstrapServers: String {
        switch self {
        case .embedded(let cluster): cluster.bootstrapServers
        case .tansu(let broker): broker.bootstrapServers
        }
    }

    /// The mock cluster, for tests that take its brokers down or inject errors; nil on Tansu.
    var embeddedCluster: EmbeddedKafkaCluster? {
        if case .embedded(let cluster) = self { cluster } else { nil }
    }

    /// The Tansu broker, for tests that freeze it; nil on the mock cluster.
    var tansuBroker: TansuBroker? {
        if case .tansu(let broker) = self { broker } else { nil }
    }

    /// Creates every product topic with `partitions` partitions, the app-states topic compacted: on
    /// the mock cluster through its own API, on Tansu through the admin API as on any real cluster.
    func createProductTopics(partitions: Int32, logger: Logger) async throws {
        let topics = TopicSettings.product.specifications(partitions: partitions)
        switch self {
        case .embedded(let cluster):
            try cluster.createTopics(topics)
        case .tansu(let broker):
            let admin = try KafkaAdmin(bootstrapServers: broker.bootstrapServers, logger: logger)
            try await admin.createTopics(topics, timeout: .seconds(20))
        }
    }

    /// Stops the broker (a Tansu process is killed and awaited).
    func shutdown() async {
        switch self {
        case .embedded(let cluster): cluster.shutdown()
        case .tansu(let broker): await broker.stop()
        }
    }
}
