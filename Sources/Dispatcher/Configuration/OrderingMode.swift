/// How strictly the worker keeps the order of records (docs/worker.md, "Ordering").
public enum OrderingMode: String, Sendable, Hashable, CaseIterable {
    /// Records with the same key run one after another; different keys run concurrently (default).
    case key
    /// Records of one partition run one after another.
    case partition
    /// No ordering: every record runs as soon as there is room.
    case unordered
}
