/// An option of a notification category (`UNNotificationCategoryOptions`); only
/// `customDismissAction` changes what the dispatcher decides (SEMANTICS section 10).
public enum CategoryOption: String, Sendable, Hashable, CaseIterable {
    /// Dismissing a notification of the category is reported to the app.
    case customDismissAction
    /// Notifications of the category may be shown in CarPlay.
    case allowInCarPlay
    /// The title is shown when previews are hidden.
    case hiddenPreviewsShowTitle
    /// The subtitle is shown when previews are hidden.
    case hiddenPreviewsShowSubtitle
    /// Siri may read notifications of the category aloud (deprecated by Apple in iOS 15).
    case allowAnnouncement
}
