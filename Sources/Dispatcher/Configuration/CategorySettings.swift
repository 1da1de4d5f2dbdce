/// Settings for one notification category of an app (`apps[...].categories.NAME`).
public struct CategorySettings: Sendable, Hashable {
    /// The category's extension; nil falls back to the app's.
    public var serviceExtension: ServiceExtensionSetting?
    /// The category's deadline; nil falls back to the app's, then `dispatch.deadline`.
    public var deadline: Duration?
    /// The category's `extensionMemoryLimit` (section 22); nil falls back to the app's, then
    /// `dispatch.extensionMemoryLimit`.
    public var extensionMemoryLimit: Int? = nil
    /// The category's actions, in the order declared (SEMANTICS section 10).
    public var actions: [NotificationAction]
    /// The category's options, in the order declared.
    public var options: [CategoryOption]
    /// The category's `willPresent` options, overriding the app's; nil falls back to the app's (section 17.2).
    public var willPresent: [PresentationOption]? = nil

    /// Creates category settings.
    public init(
        serviceExtension: ServiceExtensionSetting? = nil,
        deadline: Duration? = nil,
        actions: [NotificationAction] = [],
        options: [CategoryOption] = []
    ) {
        self.serviceExtension = serviceExtension
        self.deadline = deadline
        self.actions = actions
        self.options = options
    }

    /// The declared action with `id`, nil when there is none.
    package func action(_ id: String) -> NotificationAction? {
        actions.first { $0.id == id }
    }

    /// Whether dismissing a notification of the category is reported (`customDismissAction`).
    package var reportsDismiss: Bool { options.contains(.customDismissAction) }
}
