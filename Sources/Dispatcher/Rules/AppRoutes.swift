import Notifications

/// One app's configuration compiled for dispatching: its extension chains built from the
/// registry, and its content extensions by category.
///
/// A class, immutable: every record of the app reads it (its settings, its routes), and a struct
/// of this many strings, arrays and dictionaries cost a dozen retains per record to pass around.
final class AppRoutes: Sendable {
    /// A category's routing: its own chain (or explicit none), deadline and memory limit.
    struct CategoryRoute: Sendable {
        /// nil: use the app's extension; `.some(nil)`: explicitly none; otherwise the category's chain.
        let chain: ExtensionChain??
        /// The category's deadline, nil to use the app's.
        let deadline: Duration?
        /// The category's `extensionMemoryLimit`, nil to use the app's.
        let memoryLimit: Int?
    }

    /// The app's settings as configured.
    let settings: AppSettings
    /// The app's own chain, nil when none.
    let chain: ExtensionChain?
    /// The routed categories.
    let categories: [String: CategoryRoute]
    /// The presentation of each category a content extension presents.
    let presentations: [String: Presentation]
    /// The content extension presenting each category (for responses, SEMANTICS section 10).
    let presenters: [String: ContentExtensionSettings]

    /// Compiles `settings`, checking every extension step against `registry`.
    init(_ settings: AppSettings, registry: ExtensionRegistry) throws(ConfigurationError) {
        self.settings = settings
        chain = try Self.chain(settings.serviceExtension, registry: registry)
        var categories: [String: CategoryRoute] = [:]
        for (name, category) in settings.categories {
            let chain: ExtensionChain?? =
                if let setting = category.serviceExtension { .some(try Self.chain(setting, registry: registry)) } else { nil }
            categories[name] = CategoryRoute(chain: chain, deadline: category.deadline, memoryLimit: category.extensionMemoryLimit)
        }
        self.categories = categories
        var presenters: [String: ContentExtensionSettings] = [:]
        for contentExtension in settings.contentExtensions {
            for category in contentExtension.categories { presenters[category] = contentExtension }
        }
        self.presenters = presenters
        self.presentations = presenters.mapValues(Presentation.init)
    }

    /// A routing decision: the route as reported and the chain to run, nil when there is none.
    struct Route: Sendable {
        /// What was decided, for the delivery.
        let decision: ExtensionRoute
        /// The chain to run; nil when no extension applies.
        let chain: ExtensionChain?
    }

    /// The route of a push of `category` to the app `routes` (nil when the app is not configured),
    /// with the `dispatch` section's deadline and memory limit where neither the category nor the
    /// app sets one.
    static func route(_ routes: AppRoutes?, category: String?, defaultDeadline: Duration, defaultMemoryLimit: Int) -> Route {
        guard let routes else {
            return Route(
                decision: ExtensionRoute(
                    choice: .appNotConfigured, chainName: nil, deadline: defaultDeadline, deadlineSource: .dispatch,
                    memoryLimit: defaultMemoryLimit, memoryLimitSource: .dispatch),
                chain: nil)
        }
        return routes.route(category: category, defaultDeadline: defaultDeadline, defaultMemoryLimit: defaultMemoryLimit)
    }

    /// The chain, deadline and memory limit for a push of `category`.
    func route(category: String?, defaultDeadline: Duration, defaultMemoryLimit: Int) -> Route {
        let categoryRoute = category.flatMap { categories[$0] }
        let choice: ExtensionRoute.Choice
        let selected: ExtensionChain?
        if let category, let categoryChain = categoryRoute?.chain {
            selected = categoryChain
            choice = categoryChain == nil ? .categoryOptedOut(category) : .category(category)
        } else {
            selected = chain
            choice = chain == nil ? .appHasNone : .app
        }
        let (deadline, deadlineSource) = Self.setting(
            category: category, categoryRoute?.deadline, app: settings.deadline, default: defaultDeadline)
        let (memoryLimit, memoryLimitSource) = Self.setting(
            category: category, categoryRoute?.memoryLimit, app: settings.extensionMemoryLimit, default: defaultMemoryLimit)
        return Route(
            decision: ExtensionRoute(
                choice: choice, chainName: selected?.name, deadline: deadline, deadlineSource: deadlineSource,
                memoryLimit: memoryLimit, memoryLimitSource: memoryLimitSource),
            chain: selected)
    }

    /// A setting a category may give, else the app, else the `dispatch` section, with where it came from.
    /// A category's setting applies even when the extension is the app's.
    private static func setting<Value>(
        category: String?, _ categoryValue: Value?, app appValue: Value?, default defaultValue: Value
    ) -> (Value, ExtensionRoute.DeadlineSource) {
        if let category, let categoryValue { return (categoryValue, .category(category)) }
        if let appValue { return (appValue, .app) }
        return (defaultValue, .dispatch)
    }

    private static func chain(
        _ setting: ServiceExtensionSetting?, registry: ExtensionRegistry
    ) throws(ConfigurationError) -> ExtensionChain? {
        guard case .chain(let steps) = setting else { return nil }
        return try ExtensionChain(steps, registry: registry)
    }
}
