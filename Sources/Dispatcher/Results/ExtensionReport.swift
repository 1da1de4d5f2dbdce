/// The `extension` object of a delivery: which extension ran, for how long, and how it ended.
public struct ExtensionReport: Sendable, Hashable {
    /// The step names joined with `+`.
    public var name: String
    /// The request's category, nil when it has none.
    public var category: String?
    /// Time from the start of the first step to the end of the run (grace included).
    public var elapsed: Duration
    /// Whether the deadline passed.
    public var expired: Bool
    /// How the run ended.
    public var outcome: ExtensionOutcome
    /// For a failure: which step failed and why (for logs; not part of the delivery record).
    public var failure: String?
    /// For a chain stopped for its memory (section 22): where and at how many bytes (not part of
    /// the delivery record, whose `extension` is a run's like any other).
    public var memoryStop: MemoryStop?

    /// Where a chain's memory passed its limit.
    public struct MemoryStop: Sendable, Hashable {
        /// The step running (or handing its content on) when the memory passed the limit.
        public var step: String
        /// What the chain held, or would have held, at that moment, in bytes.
        public var heldBytes: Int
        /// The chain's limit (`extensionMemoryLimit`), in bytes.
        public var limitBytes: Int

        /// A stop in `step` at `heldBytes` of `limitBytes`.
        package init(step: String, heldBytes: Int, limitBytes: Int) {
            self.step = step
            self.heldBytes = heldBytes
            self.limitBytes = limitBytes
        }
    }

    /// `elapsed` in whole milliseconds, as the delivery record has it.
    public var elapsedMilliseconds: Int64 { elapsed.wholeMilliseconds }

    /// Creates a report.
    package init(
        name: String, category: String?, elapsed: Duration, expired: Bool, outcome: ExtensionOutcome,
        failure: String? = nil
    ) {
        self.name = name
        self.category = category
        self.elapsed = elapsed
        self.expired = expired
        self.outcome = outcome
        self.failure = failure
    }
}
