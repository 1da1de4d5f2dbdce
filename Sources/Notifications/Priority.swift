/// The `apns-priority` values.
public enum Priority: Int, Sendable, CaseIterable {
    /// Deliver at once (10), the default except for `background`.
    case immediate = 10
    /// Deliver when power allows (5), the `background` default.
    case conserve = 5
    /// Deliver with the lowest priority (1).
    case low = 1
}
