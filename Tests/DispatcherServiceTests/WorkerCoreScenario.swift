import PropertyBased
import Testing

/// A random life of a worker's core, as the property tests draw it: flow-control limits and a
/// sequence of events (``CoreStep``) that ``WorkerCoreModel`` plays against a real
/// ``WorkerCore``.
///
/// Every step is valid in every state: its numbers are taken modulo what exists (the running
/// records, the pending revocations), and a step that finds nothing to act on does nothing. So
/// the shrinker may drop any step or lower any number, and what it prints is a literal that an
/// example test replays as it is.
struct CoreScenario: Sendable, CustomTestStringConvertible {
    /// `dispatch.maxInFlight`.
    var maxRecords: Int
    /// `dispatch.maxBufferedBytes`.
    var maxBytes: Int
    /// `dispatch.resumeRatio`, in quarters (1 to 3).
    var resumeQuarters: Int
    /// The events, in order.
    var steps: [CoreStep]

    var testDescription: String {
        "CoreScenario(maxRecords: \(maxRecords), maxBytes: \(maxBytes), resumeQuarters: \(resumeQuarters), steps: ["
            + steps.map(\.testDescription).joined(separator: ", ") + "])"
    }

    /// Scenarios of 1 to 24 steps, with limits small enough that the intake is held and
    /// restarted often: 1 to 8 records, 8 to 600 bytes (a record holds 0 to 61).
    static func generator(exactlyOnce: Bool) -> Generator<CoreScenario, some Sequence & SendableMetatype> {
        let kinds = exactlyOnce ? CoreStep.Kind.exactlyOnceDraw : CoreStep.Kind.atLeastOnceDraw
        let step = zip(Gen.int(in: 0...(kinds.count - 1)), Gen.int(in: 0...7), Gen.int(in: 0...7), Gen.int(in: 0...255))
            .map { drawn in CoreStep(kinds[drawn.0], drawn.1, drawn.2, drawn.3) }
        return zip(Gen.int(in: 1...8), Gen.int(in: 8...600), Gen.int(in: 1...3), step.array(of: 1...24))
            .map { drawn in CoreScenario(maxRecords: drawn.0, maxBytes: drawn.1, resumeQuarters: drawn.2, steps: drawn.3) }
    }
}

/// One event of a ``CoreScenario``: what happens, and three numbers that say to what.
struct CoreStep: Sendable, CustomTestStringConvertible {
    /// What happens. The numbers `a`, `b` and `c` are read as each case says.
    enum Kind: String, Sendable, CaseIterable {
        /// A batch from the consumer: partition `a % 3` (`a >= 3`: alternating with the next
        /// ones), `1 + b % 4` records (`b >= 4`: taken as a lent batch, decided in place), keys
        /// and sizes from the bits of `c`.
        case admit
        /// Running record `a` produces its outputs, holding `c` bytes (`b` odd: decided in place).
        case publish
        /// Publishing record `a` is acknowledged; `b == 6` gives it up (at-least-once: only with
        /// `c < 64`), which in place means its output failed and it goes the owned way.
        case acknowledge
        /// Running record `a` publishes and is acknowledged at once (``publish`` then ``acknowledge``).
        case finish
        /// Every publishing record is acknowledged, in two batches (owned and in place).
        case acknowledgeAll
        /// Partition `a % 3` is revoked (`a >= 3`: every owned partition, as `range` does).
        case revoke
        /// Pending revocation `a` completes once drained (at-least-once, `b == 7`: at the drain
        /// limit, drained or not), after its commit.
        case completeRevocation
        /// Partition `a % 3` is lost (`a >= 3`: every owned one). Exactly-once: the worker stops.
        case lose
        /// Partition `a % 3` is assigned, when not owned (`a >= 3`: every one not owned).
        case assign
        /// At-least-once: the commit plan is taken and sent.
        case planCommit
        /// At-least-once: sent commit `a` is acknowledged (`b` odd: it failed).
        case acknowledgeCommit
        /// At-least-once: the consumer goes back `1 + b` offsets in partition `a % 3` (a reset, a
        /// redelivery).
        case rewindConsumer
        /// Graceful shutdown begins.
        case shutdown
        /// Exactly-once: a transaction commit begins (no record is taken in until it ends).
        case beginTransactionCommit
        /// Exactly-once: the commit, once drained, sends its plan and commits (`b == 7`: the
        /// commit fails, and the transaction is rewound instead).
        case commitTransaction
        /// Exactly-once: a rewind asked for begins (waiting records dropped).
        case beginRewind
        /// Exactly-once: the rewind, once drained, moves the partitions back.
        case completeRewind
        /// Exactly-once: the consumer reports its rewind of partition `a % 3`.
        case reportRewound

        /// The kinds as drawn in at-least-once mode: a kind appears as often as it is to be drawn.
        static let atLeastOnceDraw: [Kind] = weighted([
            (.admit, 25), (.publish, 6), (.acknowledge, 6), (.finish, 20), (.acknowledgeAll, 3), (.revoke, 5),
            (.completeRevocation, 7), (.lose, 2), (.assign, 9), (.planCommit, 6), (.acknowledgeCommit, 6),
            (.rewindConsumer, 4), (.shutdown, 1),
        ])

        /// The kinds as drawn in exactly-once mode.
        static let exactlyOnceDraw: [Kind] = weighted([
            (.admit, 24), (.publish, 6), (.acknowledge, 6), (.finish, 16), (.acknowledgeAll, 3), (.revoke, 4),
            (.completeRevocation, 6), (.lose, 1), (.assign, 8), (.shutdown, 1), (.beginTransactionCommit, 8),
            (.commitTransaction, 8), (.beginRewind, 3), (.completeRewind, 3), (.reportRewound, 3),
        ])

        private static func weighted(_ weights: [(Kind, Int)]) -> [Kind] {
            weights.flatMap { repeatElement($0.0, count: $0.1) }
        }
    }

    var kind: Kind
    var a: Int
    var b: Int
    var c: Int

    init(_ kind: Kind, _ a: Int, _ b: Int, _ c: Int) {
        self.kind = kind
        self.a = a
        self.b = b
        self.c = c
    }

    var testDescription: String { "CoreStep(.\(kind.rawValue), \(a), \(b), \(c))" }
}
