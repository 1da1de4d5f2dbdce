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
    /// `extensionMemoryLimit`: the bytes the app's extension chains may hold at once (section 22);
    /// nil uses `dispatch.extensionMemoryLimit`.
    public var extensionMemoryLimit: Int? = nil
    /// The app's service extension; nil when none is configured.
    public var serviceExtension: ServiceExtensionSetting? = nil
    /// Per-category routing, keyed by the exact category.
    public var categories: [String: CategorySettings] = [:]
    /// The app's content extensions.
    public var contentExtensions: [ContentExtensionSettings] = []
    /// `entitlements`: the capabilities the app has (section 11.4).
    public var entitlements: Set<Entitlement> = []
    /// `willPresent`: the options the app's `userNotificationCenter(_:willPresent:withCompletionHandler:)`
    /// passes, in the order banner, list, sound, badge; nil when the delegate does not implement it
    /// (section 17.2).
    public var willPresent: [PresentationOption]? = nil
    /// `liveActivityBudget`: priority-10 ActivityKit pushes an activity may apply per rolling hour (section 14.5).
    public var liveActivityBudget: Int = 10
    /// `badgeLedger`: whether the dispatcher keeps the count of the app's badge on each device and
    /// accepts `badge-increment` (section 21).
    public var badgeLedger: Bool = false

    /// The defaults: no extension, no categories.
    public init() {}
}
