/// What a consumer reads of transactional records (`isolation.level`).
public enum IsolationLevel: String, Sendable, Hashable, CaseIterable {
    /// Only records of committed transactions (and non-transactional ones), up to the last stable
    /// offset: what a reader of an exactly-once worker's outputs must use. librdkafka's default.
    case readCommitted = "read_committed"
    /// Every record as soon as it is written, those of open and aborted transactions included.
    case readUncommitted = "read_uncommitted"
}
