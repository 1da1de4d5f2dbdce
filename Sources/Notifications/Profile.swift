/// The device generation whose rules apply (SEMANTICS.md section 8).
public enum Profile: String, Sendable, CaseIterable {
    /// iOS 10 and later: every rule.
    case modern
    /// Before iOS 7: 256-byte payloads, no extensions, no PushKit, `content-available` without effect.
    case legacy
}
