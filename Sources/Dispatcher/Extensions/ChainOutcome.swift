/// What running a chain came to, before the post-check (SEMANTICS section 4).
struct ChainOutcome: Sendable {
    /// How the run ended.
    enum Ending: Sendable {
        /// Every step finished in time; the content after the last step.
        case finished(ValidatedContent)
        /// The deadline passed; the best attempt (nil when nothing differs from the original).
        case expired(ValidatedContent?)
        /// A step failed: which one, why (for the report) and the failure's kind (for the log,
        /// `ExtensionFailureLog.kind(of:)`).
        case failed(step: String, detail: String, kind: String)
        /// The chain's memory passed its limit while `step` ran (or when it handed its content on):
        /// the chain was stopped at once (section 22).
        case memoryLimit(ExtensionReport.MemoryStop)
    }

    /// How the run ended.
    let ending: Ending
    /// Time from the start of the first step to the end of the run (grace included).
    let elapsed: Duration
}
