import Kafka
import Logging
import Records
import Synchronization

extension DispatchWorker {
    /// Takes a batch of consumed records into flight.
    /// - Returns: the records that may start now (at most one per ordering key).
    func take(_ messages: [KafkaMessage]) -> [WorkItem] {
        let now = ContinuousClock.now
        let effects = core.withLock { $0.admit(messages, at: now) }
        carryOut(effects)
        return effects.start
    }

    /// New partitions were assigned.
    func assign(_ partitions: [TopicPartition]) {
        core.withLock { $0.assign(partitions) }
        logger.info("partitions assigned", metadata: [LogKey.partitions: "\(describe(partitions))"])
        health?.joinedGroup()
    }

    /// Carries out a transition's effects, except starting records (the caller runs those where
    /// it is): the intake's hold, rewinds to log, partitions to release, drain waiters to wake.
    func carryOut(_ effects: WorkerEffects) {
        if let change = effects.intake { intake.apply(change, inFlight: { self.core.withLock { $0.inFlight } }) }
        for rewind in effects.rewinds {
            logger.warning(
                "the consumer went back to an earlier offset; processing from there again",
                metadata: [
                    LogKey.topic: "\(rewind.partition.topic)", LogKey.partition: "\(rewind.partition.partition)",
                    LogKey.offset: "\(rewind.offset)", "kafka.previous_next_offset": "\(rewind.previousNext)",
                ])
        }
        if let release = effects.release { consumer.releaseRevoked(release) }
        if effects.progressed { progress.notify() }
    }
}

/// Holds and restarts the consumer's intake as the core decides, in the order it decided.
///
/// The intake is held rather than the partitions paused: librdkafka keeps what it prefetched and
/// takes up again at once, where a resumed partition fetches again only after about half a second
/// (``KafkaConsumer/holdIntake(_:)``), a stall per pause that capped the worker at about 15,000
/// records per second.
final class IntakeSwitch: Sendable {
    private let consumer: KafkaConsumer
    private let logger: Logger
    /// The number of the last decision applied. The lock is held while applying, so two
    /// decisions are never applied at once, and an older one arriving late is ignored.
    private let applied = Mutex<UInt64>(0)

    init(consumer: KafkaConsumer, logger: Logger) {
        self.consumer = consumer
        self.logger = logger
    }

    /// Applies `change` unless a later decision was applied already.
    /// - Parameter inFlight: the records in flight, read only for the debug log line.
    func apply(_ change: IntakeChange, inFlight: () -> Int) {
        applied.withLock { applied in
            guard change.sequence > applied else { return }
            applied = change.sequence
            consumer.holdIntake(change.held)
            if logger.logLevel <= .debug {
                logger.debug(change.held ? "intake held" : "intake restarted", metadata: [LogKey.inFlight: "\(inFlight())"])
            }
        }
    }
}
