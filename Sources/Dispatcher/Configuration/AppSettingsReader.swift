import JSON
import Notifications
import Yams

/// Reads the `apps` section: per bundle ID, the delegate, action handler, state, deadline, extensions
/// and categories (their actions: `AppSettingsReader+Actions.swift`).
enum AppSettingsReader {
    /// The keys of one app.
    private static let appKeys = [
        "appDelegate", "actionHandler", "defaultAppState", "deadline", "extensionMemoryLimit", "serviceExtension", "categories",
        "contentExtensions", "entitlements", "willPresent", "liveActivityBudget", "badgeLedger",
    ]

    /// The apps under `node`, keyed by bundle ID.
    static func apps(_ node: Node?, at path: ConfigPath) throws(ConfigurationError) -> [String: AppSettings] {
        var reader = try ConfigMapping(node, at: path)
        var apps: [String: AppSettings] = [:]
        for bundleID in reader.keys {
            guard !bundleID.isEmpty else {
                throw ConfigurationError(.invalidValue, at: path.description, value: "\"\"", "a bundle ID must not be empty")
            }
            apps[bundleID] = try app(reader.node(bundleID), at: path.appending(bundleID))
        }
        return apps
    }

    private static func app(_ node: Node?, at path: ConfigPath) throws(ConfigurationError) -> AppSettings {
        var reader = try ConfigMapping(node, at: path)
        var settings = AppSettings()
        if let value = try reader.scalar("appDelegate") { settings.appDelegate = try value.choice(AppDelegateMethods.self) }
        if let value = try reader.scalar("actionHandler") { settings.actionHandler = try value.choice(ActionHandler.self) }
        if let value = try reader.scalar("defaultAppState") { settings.defaultAppState = try value.choice(AppState.self) }
        if let value = try reader.scalar("deadline") { settings.deadline = try value.duration(maximum: DispatchSettings.longestDeadline) }
        if let value = try reader.scalar("extensionMemoryLimit") {
            settings.extensionMemoryLimit = try value.byteSize(maximum: DispatchSettings.largestExtensionMemoryLimit)
        }
        if let node = reader.node("serviceExtension") {
            settings.serviceExtension = try serviceExtension(node, at: path.appending("serviceExtension"))
        }
        settings.categories = try categories(reader.node("categories"), at: path.appending("categories"))
        settings.contentExtensions = try contentExtensions(
            reader.node("contentExtensions"), at: path.appending("contentExtensions"))
        settings.entitlements = Set(try choices(reader.node("entitlements"), Entitlement.self, at: path.appending("entitlements")) ?? [])
        if let options = try choices(reader.node("willPresent"), PresentationOption.self, at: path.appending("willPresent")) {
            settings.willPresent = options.sorted()
        }
        if let value = try reader.scalar("liveActivityBudget") { settings.liveActivityBudget = try value.int(in: 1...1_000_000) }
        if let value = try reader.scalar("badgeLedger") { settings.badgeLedger = try value.bool() }
        try reader.rejectUnknownKeys(allowed: appKeys)
        try checkActionResponses(settings, at: path)
        return settings
    }

    private static func categories(_ node: Node?, at path: ConfigPath) throws(ConfigurationError) -> [String: CategorySettings] {
        var reader = try ConfigMapping(node, at: path)
        var categories: [String: CategorySettings] = [:]
        for name in reader.keys {
            let categoryPath = path.appending(name)
            var category = try ConfigMapping(reader.node(name), at: categoryPath)
            var settings = CategorySettings()
            if let node = category.node("serviceExtension") {
                settings.serviceExtension = try serviceExtension(node, at: categoryPath.appending("serviceExtension"))
            }
            if let value = try category.scalar("deadline") { settings.deadline = try value.duration(maximum: DispatchSettings.longestDeadline) }
            if let value = try category.scalar("extensionMemoryLimit") {
                settings.extensionMemoryLimit = try value.byteSize(maximum: DispatchSettings.largestExtensionMemoryLimit)
            }
            settings.actions = try actions(category.node("actions"), at: categoryPath.appending("actions"))
            settings.options = try categoryOptions(category.node("options"), at: categoryPath.appending("options"))
            if let options = try choices(category.node("willPresent"), PresentationOption.self, at: categoryPath.appending("willPresent")) {
                settings.willPresent = options.sorted()
            }
            try category.rejectUnknownKeys(allowed: ["serviceExtension", "deadline", "extensionMemoryLimit", "actions", "options", "willPresent"])
            categories[name] = settings
        }
        return categories
    }

    /// `none`, one step, or a list of steps.
    static func serviceExtension(_ node: Node, at path: ConfigPath) throws(ConfigurationError) -> ServiceExtensionSetting? {
        switch node {
        case .scalar(let scalar) where scalar.resolvedTagName == .null:
            return nil
        case .scalar(let scalar) where scalar.string == "none":
            return ServiceExtensionSetting.none
        case .mapping:
            return .chain([try step(node, at: path)])
        case .sequence(let sequence):
            guard !sequence.isEmpty else {
                throw ConfigurationError(.invalidValue, at: path.description, value: "[]", "an empty chain: write none for no extension")
            }
            var steps: [ExtensionStep] = []
            for (index, element) in sequence.enumerated() {
                steps.append(try step(element, at: path.appending(index: index)))
            }
            return .chain(steps)
        default:
            throw ConfigurationError(
                .wrongType, at: path.description, value: node.scalar?.string,
                "expected none, a step ({kind: ..., name: ..., options}) or a list of steps")
        }
    }

    private static func step(_ node: Node, at path: ConfigPath) throws(ConfigurationError) -> ExtensionStep {
        var reader = try ConfigMapping(node, at: path)
        let kind = try reader.requiredScalar("kind").nonEmptyString()
        let name = try reader.scalar("name")?.nonEmptyString()
        var options = JSONObject()
        for key in reader.keys where key != "kind" && key != "name" {
            guard let value = reader.node(key) else { continue }
            options[key] = try YAMLJSON.value(value, at: path.appending(key))
        }
        return ExtensionStep(kind: kind, name: name, options: options, configPath: path.description)
    }

    private static func contentExtensions(
        _ node: Node?, at path: ConfigPath
    ) throws(ConfigurationError) -> [ContentExtensionSettings] {
        guard let node else { return [] }
        if case .scalar(let scalar) = node, scalar.resolvedTagName == .null { return [] }
        guard case .sequence(let sequence) = node else {
            throw ConfigurationError(.wrongType, at: path.description, "expected a list of content extensions")
        }
        var extensions: [ContentExtensionSettings] = []
        var owners: [String: String] = [:]
        for (index, element) in sequence.enumerated() {
            let elementPath = path.appending(index: index)
            let settings = try contentExtension(element, at: elementPath)
            for category in settings.categories {
                if let owner = owners[category] {
                    throw ConfigurationError(
                        .duplicateCategory, at: elementPath.appending("categories").description, value: category,
                        "category \"\(category)\" already belongs to content extension \(owner) of this app; a category may belong to at most one")
                }
            }
            for category in settings.categories { owners[category] = "\(settings.name) (\(elementPath))" }
            extensions.append(settings)
        }
        return extensions
    }

    private static func contentExtension(_ node: Node, at path: ConfigPath) throws(ConfigurationError) -> ContentExtensionSettings {
        var reader = try ConfigMapping(node, at: path)
        let name = try reader.requiredScalar("name").nonEmptyString()
        let categories = try stringList(reader.node("categories"), at: path.appending("categories"))
        let ratioValue = try reader.requiredScalar("initialContentSizeRatio")
        let ratio = try ratioValue.double()
        guard ratio > 0 else { throw ratioValue.error(.invalidValue, "must be a number above 0") }
        var settings = ContentExtensionSettings(name: name, categories: categories, initialContentSizeRatio: ratio)
        if let value = try reader.scalar("defaultContentHidden") { settings.defaultContentHidden = try value.bool() }
        if let value = try reader.scalar("overridesDefaultTitle") { settings.overridesDefaultTitle = try value.bool() }
        if let value = try reader.scalar("userInteractionEnabled") { settings.userInteractionEnabled = try value.bool() }
        settings.actionResponses = try actionResponses(reader.node("actionResponses"), at: path.appending("actionResponses"))
        if let value = try reader.scalar("mediaPlayPauseButton") {
            settings.mediaPlayPauseButton = try value.choice(MediaPlayPauseButton.self)
        }
        try reader.rejectUnknownKeys(allowed: [
            "name", "categories", "initialContentSizeRatio", "defaultContentHidden", "overridesDefaultTitle",
            "userInteractionEnabled", "actionResponses", "mediaPlayPauseButton",
        ])
        return settings
    }

    /// A list (possibly empty) of `Value`'s spellings, as `choices(_:at:of:)` reads it; nil when
    /// absent or YAML null (for `willPresent`, absent and empty mean different things).
    private static func choices<Value: RawRepresentable & CaseIterable & Equatable>(
        _ node: Node?, _ type: Value.Type, at path: ConfigPath
    ) throws(ConfigurationError) -> [Value]? where Value.RawValue == String {
        guard let node else { return nil }
        if case .scalar(let scalar) = node, scalar.resolvedTagName == .null { return nil }
        return try choices(node, at: path, of: type)
    }

    /// A string or a non-empty list of strings; duplicates are kept once.
    private static func stringList(_ node: Node?, at path: ConfigPath) throws(ConfigurationError) -> [String] {
        guard let node else {
            throw ConfigurationError(.missingValue, at: path.description, "a category or a list of categories is required")
        }
        var values: [String] = []
        switch node {
        case .scalar(let scalar) where scalar.resolvedTagName != .null:
            values = [try ConfigScalar(node: scalar, location: path.description).nonEmptyString()]
        case .sequence(let sequence) where !sequence.isEmpty:
            for (index, element) in sequence.enumerated() {
                guard case .scalar(let scalar) = element else {
                    throw ConfigurationError(.wrongType, at: path.appending(index: index).description, "expected a category name")
                }
                let value = try ConfigScalar(node: scalar, location: path.appending(index: index).description).nonEmptyString()
                if !values.contains(value) { values.append(value) }
            }
        default:
            throw ConfigurationError(.missingValue, at: path.description, "a category or a non-empty list of categories is required")
        }
        return values
    }
}
