/// What a delivery does to the app icon's badge.
public enum BadgeEffect: String, Sendable, CaseIterable {
    /// A positive (or non-zero) badge number is shown.
    case set
    /// The badge is removed (`badge` 0, or absent in the `legacy` profile).
    case clear
    /// The badge stays as it is.
    case unchanged
}
