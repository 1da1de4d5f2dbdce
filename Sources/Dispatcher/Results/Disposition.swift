/// What happened to a valid request's content (SEMANTICS section 5).
public enum Disposition: String, Sendable, Hashable, CaseIterable {
    /// A service extension's content is delivered.
    case modified
    /// The original content is delivered.
    case original
    /// Nothing is shown (expired, or silent to a force-quit app).
    case discarded
}
