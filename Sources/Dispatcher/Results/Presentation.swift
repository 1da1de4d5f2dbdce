/// The `presentation` of a delivery: the content extension that shows it (SEMANTICS section 7).
public struct Presentation: Sendable, Hashable {
    /// The content extension's name.
    public var contentExtension: String
    /// Its initial content size ratio.
    public var initialContentSizeRatio: Double
    /// Whether the default content is hidden.
    public var defaultContentHidden: Bool
    /// Whether it overrides the default title.
    public var overridesDefaultTitle: Bool
    /// Whether the user can interact with it.
    public var userInteractionEnabled: Bool
    /// Its media button; nil when it has none (the record then has no `mediaPlayPauseButtonType`).
    public var mediaPlayPauseButtonType: MediaPlayPauseButton?

    /// The presentation of `settings`.
    package init(_ settings: ContentExtensionSettings) {
        contentExtension = settings.name
        initialContentSizeRatio = settings.initialContentSizeRatio
        defaultContentHidden = settings.defaultContentHidden
        overridesDefaultTitle = settings.overridesDefaultTitle
        userInteractionEnabled = settings.userInteractionEnabled
        mediaPlayPauseButtonType = settings.mediaPlayPauseButton == .none ? nil : settings.mediaPlayPauseButton
    }
}
