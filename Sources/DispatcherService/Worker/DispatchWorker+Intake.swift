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
    /// - Returns: exactly-once, those that started from this member's own last commit because
    ///   the group's committed offset lay below it (``CommittedFloor``), with the assignment's
    ///   epoch: to commit there again (``commitRaisedStarts(_:)``).
    func assign(_ partitions: [TopicPartition]) -> [RaisedStart] {
        let starts = committedFloor?.takeRaisedStarts(among: partitions) ?? []
        let raised = core.withLock { core in
            core.assign(partitions)
            return starts.compactMap { start in core.partitions[start.topicPartition].map { RaisedStart(offset: start, epoch: $0.epoch) } }
        }
        logger.info("partitions assigned", metadata: [LogKey.partitions: "\(describe(partitions))"])
        health?.joinedGroup()
        return raised
    }

    /// A partition of an assignment that started from this member's own last commit, above the
    /// group's committed offset: where, and the assignment's epoch.
    struct RaisedStart: Sendable {
        var offset: TopicPartitionOffset
        var epoch: UInt64
    }

    /// Commits `raised` (partitions started from this member's own last commit, above the
    /// group's committed offset) as the group's offsets again, with an ordinary offset commit.
    ///
    /// Without it the group's offset stays below until this member's next transaction covering
    /// that partition, which comes only with its next record: lag never reaches 0 on a quiet
    /// partition, and a later owner would start at the old answer and write its records again.
    /// Tansu 0.6.0 (the only broker that answers below a member's commit) settles transactions
    /// held back together and may store an older commit last (a zombie's, committed just before it
    /// froze); and it never stores the offsets of a transaction that wrote no record, so a
    /// transaction could not carry them (`TransactionTests` pins both). The offsets are the
    /// member's own acknowledged commits, so the commit skips nothing. A failure is a warning and
    /// a failed commit in the metrics: the next transaction of each partition commits past it.
    ///
    /// It takes a turn of the transactions' commits (``TransactionTurns``), so that no commit of
    /// a transaction lands between its check and its answer; and it leaves out a partition that
    /// a transaction committed since, or that left the assignment: committed after them, the
    /// start would move the group's offset back below records done.
    func commitRaisedStarts(_ raised: [RaisedStart]) async {
        await transactionTurns.run {
            let starts = self.core.withLock { core in
                raised.filter { start in
                    guard let partition = core.partitions[start.offset.topicPartition] else { return false }
                    return partition.epoch == start.epoch && partition.committedOffset == nil
                }.map(\.offset)
            }
            guard !starts.isEmpty else { return }
            do {
                try await self.consumer.commit(starts)
                self.logger.notice(
                    "the group's committed offsets were below this member's own commits; committed its own again",
                    metadata: [LogKey.offsets: starts.loggedOffsets])
            } catch {
                // Counted with the other failed commits (the commit failures metric).
                self.core.withLock { $0.commitFailed() }
                self.logger.warning(
                    "committing this member's own offsets again failed; the group's stay below until its next transaction there",
                    metadata: [LogKey.offsets: starts.loggedOffsets, LogKey.error: "\(error)"])
            }
        }
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
