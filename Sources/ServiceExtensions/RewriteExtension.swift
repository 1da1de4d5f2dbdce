import Dispatcher
import JSON
import Notifications

/// The built-in `rewrite` kind: sets dotted paths to (templated) JSON values, then removes paths.
struct RewriteExtension: ServiceExtension {
    /// The `set` entries in the order written.
    let assignments: [(path: DottedPath, value: JSONValue)]
    /// The `remove` paths.
    let removals: [DottedPath]

    /// Checks `options`: `set` (a mapping of dotted paths to values) and `remove` (a list of dotted paths).
    init(options: ExtensionOptions) throws(ExtensionOptionsError) {
        try options.rejectUnknownKeys(allowed: ["set", "remove"])
        var assignments: [(path: DottedPath, value: JSONValue)] = []
        for (key, value) in try options.optionalObject("set") ?? JSONObject() {
            guard let path = DottedPath(key) else {
                throw ExtensionOptionsError(key: "set", value: key, "a path is keys separated by dots, e.g. aps.thread-id")
            }
            assignments.append((path, value))
        }
        var removals: [DottedPath] = []
        for element in try options.optionalArray("remove") ?? [] {
            guard let text = element.stringValue, let path = DottedPath(text) else {
                throw ExtensionOptionsError(
                    key: "remove", value: element.compactText, "expected dotted paths, e.g. aps.alert.subtitle")
            }
            removals.append(path)
        }
        self.assignments = assignments
        self.removals = removals
    }

    /// Applies `set` (templates read the content entering the step), then `remove`.
    func didReceive(_ request: ServiceExtensionRequest) async throws -> NotificationContent {
        let entering = request.content.payload
        var payload = entering
        for assignment in assignments {
            try payload.set(Template.render(assignment.value, from: entering), at: assignment.path)
        }
        for path in removals {
            try payload.remove(at: path)
        }
        return NotificationContent(payload: payload, attachments: request.content.attachments)
    }
}
