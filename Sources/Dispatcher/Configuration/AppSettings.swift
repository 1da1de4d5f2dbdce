public import Notifications

/// Settings for one app, keyed by its bundle ID under `apps`.
public struct AppSettings: Sendable, Hashable {
    /// Which remote-notification methods the app delegate implements.
    public var appDelegate: AppDelegateMethods = .fetchCompletionHandler
    /// Which method receives the actions the user picks (SEMANTICS section 10).
    public var actionHandler: ActionHandler = .userNotificationCenter
    /// The state assumed when neither the request nor the app-states table says.
    public var defaultAppState: AppState? = nil
    /// The app's extension deadline; nil uses `dispatch.deadline`.
    public var deadline: Duration? = nil
    /// The app's service extension; nil when none is configured.
    public var serviceExtension: ServiceExtensionSetting? = nil
    /// Per-category routing, keyed by the exact category.
    public var categories: [String: CategorySettings] = [:]
    /// The app's content extensions.
    public var contentExtensions: [ContentExtensionSettings] = []

    /// The defaults: no extension, no categories.
    public init() {}
}
