import Notifications

/// One app's configuration compiled for dispatching: its extension chains built from the
/// registry, and its content extensions by category.
struct AppRoutes: Sendable {
    /// A category's routing: its own chain (or explicit none) and deadline.
    struct CategoryRoute: Sendable {
        /// nil: use the app's extension; `.some(nil)`: explicitly none; otherwise the category's chain.
        let chain: ExtensionChain??
        /// The category's deadline, nil to use the app's.
        let deadline: Duration?
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
            categories[name] = CategoryRoute(chain: chain, deadline: category.deadline)
        }
        self.categories = categories
        var presenters: [String: ContentExtensionSettings] = [:]
        for contentExtension in settings.contentExtensions {
            for category in contentExtension.categories { presenters[category] = contentExtension }
        }
        self.presenters = presenters
        self.presentations = presenters.mapValues(Presentation.init)
    }

    /// The chain and deadline for a push of `category`; nil when no extension applies.
    func route(category: String?, defaultDeadline: Duration) -> (chain: ExtensionChain, deadline: Duration)? {
        let categoryRoute = category.flatMap { categories[$0] }
        let selected: ExtensionChain? =
            if let categoryChain = categoryRoute?.chain { categoryChain } else { chain }
        guard let selected else { return nil }
        return (selected, categoryRoute?.deadline ?? settings.deadline ?? defaultDeadline)
    }

    private static func chain(
        _ setting: ServiceExtensionSetting?, registry: ExtensionRegistry
    ) throws(ConfigurationError) -> ExtensionChain? {
        guard case .chain(let steps) = setting else { return nil }
        return try ExtensionChain(steps, registry: registry)
    }
}
