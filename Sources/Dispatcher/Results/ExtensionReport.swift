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
