import Notifications
import Yams

/// Reads what SEMANTICS section 10 adds to an app: a category's `actions` and `options`, a content
/// extension's `actionResponses` and `mediaPlayPauseButton`, and checks them against each other.
extension AppSettingsReader {
    /// The keys of one action.
    private static let actionKeys = ["id", "title", "options", "textInput"]

    /// `categories.NAME.actions`: a list of actions with unique ids, none of Apple's two.
    static func actions(_ node: Node?, at path: ConfigPath) throws(ConfigurationError) -> [NotificationAction] {
        var actions: [NotificationAction] = []
        var firstUse: [String: ConfigPath] = [:]
        for (elementPath, element) in try list(node, at: path, of: "actions") {
            let action = try action(element, at: elementPath)
            let idPath = elementPath.appending("id")
            if ResponseAction.reservedIdentifiers.contains(action.id) {
                throw ConfigurationError(
                    .invalidValue, at: idPath.description, value: action.id,
                    "Apple reserves this identifier: the default action (tapping the notification) and the dismiss action exist without being declared")
            }
            if let earlier = firstUse[action.id] {
                throw ConfigurationError(
                    .duplicateAction, at: idPath.description, value: action.id,
                    "the action id is already used by \(earlier); ids are unique within a category")
            }
            firstUse[action.id] = elementPath
            actions.append(action)
        }
        return actions
    }

    /// `categories.NAME.options`: a list of `UNNotificationCategoryOptions` names, each once.
    static func categoryOptions(_ node: Node?, at path: ConfigPath) throws(ConfigurationError) -> [CategoryOption] {
        try choices(node, at: path, of: CategoryOption.self)
    }

    /// A content extension's `actionResponses`: action ids (or `default`) to response options;
    /// nil when absent (the view controller does not implement `didReceive(_:completionHandler:)`).
    static func actionResponses(_ node: Node?, at path: ConfigPath) throws(ConfigurationError) -> ActionResponses? {
        guard let node else { return nil }
        if case .scalar(let scalar) = node, scalar.resolvedTagName == .null { return nil }
        var reader = try ConfigMapping(node, at: path)
        var responses = ActionResponses()
        for key in reader.keys {
            guard let value = try reader.scalar(key) else {
                throw ConfigurationError(.missingValue, at: path.appending(key).description, "expected doNotDismiss, dismiss or dismissAndForwardAction")
            }
            let option = try value.choice(ResponseOption.self)
            if key == ActionResponses.fallbackKey { responses.fallback = option } else { responses.byAction[key] = option }
        }
        return responses
    }

    /// Checks each content extension's `actionResponses` against the actions of the categories it
    /// presents: every key but `default` must name one of them.
    static func checkActionResponses(_ settings: AppSettings, at path: ConfigPath) throws(ConfigurationError) {
        for (index, contentExtension) in settings.contentExtensions.enumerated() {
            guard let responses = contentExtension.actionResponses else { continue }
            let responsesPath = path.appending("contentExtensions").appending(index: index).appending("actionResponses")
            let actionIDs = contentExtension.categories.flatMap { settings.categories[$0]?.actions.map(\.id) ?? [] }
            if actionIDs.contains(ActionResponses.fallbackKey) {
                throw ConfigurationError(
                    .invalidValue, at: responsesPath.description, value: ActionResponses.fallbackKey,
                    "a category of this content extension has an action with the id default, which actionResponses cannot tell from its default entry; rename the action")
            }
            for key in responses.byAction.keys.sorted() where !actionIDs.contains(key) {
                let declared = actionIDs.isEmpty ? "they declare no actions" : "their actions are " + actionIDs.joined(separator: ", ")
                throw ConfigurationError(
                    .unknownAction, at: responsesPath.appending(key).description, value: key,
                    "not an action of the categories this content extension presents (\(contentExtension.categories.joined(separator: ", ")): \(declared)); use one of them or default")
            }
        }
    }

    // MARK: Private

    private static func action(_ node: Node, at path: ConfigPath) throws(ConfigurationError) -> NotificationAction {
        var reader = try ConfigMapping(node, at: path)
        let id = try reader.requiredScalar("id").nonEmptyString()
        let title = try reader.requiredScalar("title").nonEmptyString()
        let options = try choices(reader.node("options"), at: path.appending("options"), of: ActionOption.self)
        var textInput: NotificationAction.TextInput?
        if let node = reader.node("textInput") {
            var field = try ConfigMapping(node, at: path.appending("textInput"))
            textInput = NotificationAction.TextInput(
                buttonTitle: try field.requiredScalar("buttonTitle").string(),
                placeholder: try field.requiredScalar("placeholder").string())
            try field.rejectUnknownKeys(allowed: ["buttonTitle", "placeholder"])
        }
        try reader.rejectUnknownKeys(allowed: actionKeys)
        return NotificationAction(id: id, title: title, options: options, textInput: textInput)
    }

    /// A list of names of `Value`, each at most once; absent or null is empty.
    static func choices<Value: RawRepresentable & CaseIterable & Equatable>(
        _ node: Node?, at path: ConfigPath, of _: Value.Type
    ) throws(ConfigurationError) -> [Value] where Value.RawValue == String {
        var values: [Value] = []
        for (elementPath, element) in try list(node, at: path, of: "names") {
            guard case .scalar(let scalar) = element else {
                throw ConfigurationError(.wrongType, at: elementPath.description, "expected a name, not a list or mapping")
            }
            let text = ConfigScalar(node: scalar, location: elementPath.description)
            let value = try text.choice(Value.self)
            guard !values.contains(value) else { throw text.error(.invalidValue, "the option is written twice") }
            values.append(value)
        }
        return values
    }

    /// The elements of a list with their paths; absent or null is empty.
    private static func list(_ node: Node?, at path: ConfigPath, of what: String) throws(ConfigurationError) -> [(ConfigPath, Node)] {
        guard let node else { return [] }
        switch node {
        case .scalar(let scalar) where scalar.resolvedTagName == .null:
            return []
        case .sequence(let sequence):
            return sequence.enumerated().map { (path.appending(index: $0.offset), $0.element) }
        default:
            throw ConfigurationError(.wrongType, at: path.description, value: node.scalar?.string, "expected a list of \(what)")
        }
    }
}
