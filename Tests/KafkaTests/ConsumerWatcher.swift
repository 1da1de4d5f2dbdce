import Kafka
import Records
import Synchronization
import TestSupport

/// Follows one consumer's events in the background so a test can await conditions on them.
final class ConsumerWatcher: Sendable {
    /// The consumer watched.
    let consumer: KafkaConsumer
    /// What has been seen so far.
    private let recorder = Mutex(ConsumerRecorder())
    /// Whether revocations are released at once (otherwise the test releases them, and once it
    /// has, later ones go at once: a loaded machine may end a session and start another round).
    private let releasesAtOnce: Atomic<Bool>

    /// Starts following `consumer`'s events.
    init(_ consumer: KafkaConsumer, releasesAtOnce: Bool = true) {
        self.consumer = consumer
        self.releasesAtOnce = Atomic(releasesAtOnce)
        // Unstructured on purpose: the watcher reads the events while the test drives the scenario;
        // the sequence ends (and the task with it) when the consumer is closed.
        Task { [self] in
            for await event in consumer.events {
                let atOnce = self.releasesAtOnce.load(ordering: .acquiring)
                recorder.withLock { $0.apply(event, release: atOnce ? consumer : nil) }
            }
        }
    }

    /// A copy of what has been seen.
    var snapshot: ConsumerRecorder { recorder.withLock { $0 } }

    /// Releases revoked partitions (when the watcher does not) and records that.
    func release(_ partitions: [TopicPartition]) {
        recorder.withLock { $0.released(partitions) }
        consumer.releaseRevoked(partitions)
        releasesAtOnce.store(true, ordering: .releasing)
    }

    /// Waits until `condition` holds for what has been seen.
    func waitUntil(_ what: String, limit: Duration = .seconds(90), _ condition: @escaping @Sendable (ConsumerRecorder) -> Bool) async throws {
        try await eventually(what, limit: limit) { [self] in condition(snapshot) }
    }
}
