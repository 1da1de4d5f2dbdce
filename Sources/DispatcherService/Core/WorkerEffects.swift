import Kafka
import Records

/// What the service must do after a transition of ``WorkerCore``, carried out after the core's
/// lock is released.
struct WorkerEffects: Sendable {
    /// Records that may start now, at most one per ordering key. The caller runs them where it
    /// is: the event loop in a new task, a finishing task in itself.
    var start: [WorkItem] = []
    /// Hold or restart the consumer's intake.
    var intake: IntakeChange?
    /// Offsets that went backwards, to log (they are counted already).
    var rewinds: [WorkerCore.Rewind] = []
    /// A revocation is complete: release these partitions in the consumer (possibly none, when
    /// they were lost and assigned again meanwhile; the consumer still needs the answer).
    var release: [TopicPartition]?
    /// Records finished or partitions left: whoever waits for a drain checks again.
    var progressed = false
}

/// A decision to hold or restart the consumer's intake, numbered in the order the core made it.
///
/// Decisions are made under the core's lock but applied after it, by different tasks: a hold and
/// a restart decided close together could be applied in the wrong order and leave the intake held
/// with nothing in flight. The number lets ``IntakeSwitch`` apply only decisions newer than the
/// last one applied.
struct IntakeChange: Sendable, Equatable {
    /// Whether the intake is to be held.
    var held: Bool
    /// 1 for the core's first decision, then one more for each.
    var sequence: UInt64
}
