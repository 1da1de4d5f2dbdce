/// A notification content extension of an app (SEMANTICS section 7).
public struct ContentExtensionSettings: Sendable, Hashable {
    /// The extension's name, reported as `presentation.contentExtension`.
    public var name: String
    /// The categories it presents (exact, case-sensitive).
    public var categories: [String]
    /// `UNNotificationExtensionInitialContentSizeRatio`: above 0.
    public var initialContentSizeRatio: Double
    /// `UNNotificationExtensionDefaultContentHidden`.
    public var defaultContentHidden: Bool
    /// `UNNotificationExtensionOverridesDefaultTitle`.
    public var overridesDefaultTitle: Bool
    /// `UNNotificationExtensionUserInteractionEnabled`.
    public var userInteractionEnabled: Bool
    /// Its answers to actions; nil when its view controller does not implement
    /// `didReceive(_:completionHandler:)`, so actions go to the app (SEMANTICS section 10).
    public var actionResponses: ActionResponses?
    /// Its media button.
    public var mediaPlayPauseButton: MediaPlayPauseButton

    /// Creates a content extension.
    public init(
        name: String,
        categories: [String],
        initialContentSizeRatio: Double,
        defaultContentHidden: Bool = false,
        overridesDefaultTitle: Bool = false,
        userInteractionEnabled: Bool = false,
        actionResponses: ActionResponses? = nil,
        mediaPlayPauseButton: MediaPlayPauseButton = .none
    ) {
        self.name = name
        self.categories = categories
        self.initialContentSizeRatio = initialContentSizeRatio
        self.defaultContentHidden = defaultContentHidden
        self.overridesDefaultTitle = overridesDefaultTitle
        self.userInteractionEnabled = userInteractionEnabled
        self.actionResponses = actionResponses
        self.mediaPlayPauseButton = mediaPlayPauseButton
    }
}
