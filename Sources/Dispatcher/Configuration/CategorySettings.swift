/// Settings for one notification category of an app (`apps[...].categories.NAME`).
public struct CategorySettings: Sendable, Hashable {
    /// The category's extension; nil falls back to the app's.
    public var serviceExtension: ServiceExtensionSetting?
    /// The category's deadline; nil falls back to the app's, then `dispatch.deadline`.
    public var deadline: Duration?

    /// Creates category settings.
    public init(serviceExtension: ServiceExtensionSetting? = nil, deadline: Duration? = nil) {
        self.serviceExtension = serviceExtension
        self.deadline = deadline
    }
}
