/// How a service extension run ended, after the post-check (for reports and metrics).
public enum ExtensionOutcome: String, Sendable, Hashable, CaseIterable {
    /// Finished in time with different content.
    case modified
    /// Finished in time with the original content.
    case unchanged
    /// Deadline passed; a different best attempt was delivered.
    case expiredBestAttempt = "expired-best-attempt"
    /// Deadline passed; the original was delivered.
    case timeout
    /// A step failed; the original was delivered.
    case failed
    /// The chain's memory passed its limit and it was stopped at once; the original was delivered
    /// (section 22).
    case memoryLimit = "memory-limit"
    /// The result had no alert text; the original was delivered.
    case alertRemoved = "alert-removed"
    /// The result had no alert text and the app has the `filtering` entitlement: nothing was shown (section 13).
    case filtered
    /// The modified delivery was too large to write; the original was delivered.
    case outputTooLarge = "output-too-large"
}
