package import JSON
import Notifications

/// The JSON value of an action record (SEMANTICS section 10), fields in the documented order.
enum ActionJSON {
    /// The action record's value.
    static func action(_ handled: HandledResponse) -> JSONObject {
        let response = handled.response
        let handling = handled.handling
        return JSONObject([
            ("apnsId", .string(response.notificationID)),
            ("deviceToken", .string(response.deviceToken)),
            ("bundleId", .string(response.bundleID)),
            ("category", .string(orNull: handled.category)),
            ("actionIdentifier", .string(orNull: response.action.identifier)),
            ("mediaCommand", .string(orNull: response.action.mediaCommand?.rawValue)),
            ("userText", .string(orNull: response.userText)),
            ("actionOptions", .array(handled.actionOptions.map { .string($0.rawValue) })),
            ("handledBy", .string(handling.handledBy.rawValue)),
            ("contentExtension", .string(orNull: handling.contentExtension)),
            ("extensionCallback", .string(orNull: handling.extensionCallback?.rawValue)),
            ("responseOption", .string(orNull: handling.responseOption?.rawValue)),
            ("interfaceDismissed", .bool(handling.interfaceDismissed)),
            ("forwardedToApp", .bool(handling.forwardedToApp)),
            ("appCallback", .string(orNull: handling.appCallback?.rawValue)),
            ("opensApp", .bool(handling.opensApp)),
            ("reason", .string(handling.reason.rawValue)),
            ("appState", .string(handled.appState.rawValue)),
            ("receivedAt", .string(Timestamp.rfc3339(response.receivedAt))),
        ])
    }
}

extension JSONValue {
    /// A string, or null when there is none.
    package static func string(orNull text: String?) -> JSONValue {
        text.map(JSONValue.string) ?? .null
    }
}
