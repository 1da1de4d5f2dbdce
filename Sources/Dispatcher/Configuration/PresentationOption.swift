/// One of the `UNNotificationPresentationOptions` an app's `willPresent` passes to its completion
/// handler (`apps.B.willPresent`, SEMANTICS section 17.2), in the documented order.
public enum PresentationOption: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Show the banner.
    case banner
    /// Add to Notification Center's list.
    case list
    /// Play the sound.
    case sound
    /// Apply the badge.
    case badge

    /// The order `options` are written in: banner, list, sound, badge.
    public static func < (lhs: PresentationOption, rhs: PresentationOption) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
