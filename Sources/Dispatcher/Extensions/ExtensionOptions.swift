public import JSON
import Notifications

/// The options of one extension step (every key of the step but `kind` and `name`), with readers
/// that throw `ExtensionOptionsError` naming the key.
public struct ExtensionOptions: Sendable, Hashable {
    /// The options as written, converted to JSON.
    public let values: JSONObject

    /// Wraps `values`.
    package init(_ values: JSONObject) {
        self.values = values
    }

    /// The value at `key`, nil when absent.
    public subscript(key: String) -> JSONValue? { values[key] }

    /// The required string at `key`.
    public func string(_ key: String) throws(ExtensionOptionsError) -> String {
        guard let value = values[key] else { throw ExtensionOptionsError(key: key, "is required") }
        guard let string = value.stringValue else {
            throw ExtensionOptionsError(key: key, value: value.compactText, "expected a string")
        }
        return string
    }

    /// The object at `key`, nil when absent.
    public func optionalObject(_ key: String) throws(ExtensionOptionsError) -> JSONObject? {
        guard let value = values[key] else { return nil }
        guard let object = value.objectValue else {
            throw ExtensionOptionsError(key: key, value: value.compactText, "expected a mapping")
        }
        return object
    }

    /// The list at `key`, nil when absent.
    public func optionalArray(_ key: String) throws(ExtensionOptionsError) -> [JSONValue]? {
        guard let value = values[key] else { return nil }
        guard let array = value.arrayValue else {
            throw ExtensionOptionsError(key: key, value: value.compactText, "expected a list")
        }
        return array
    }

    /// Throws for the first key not in `allowed`.
    public func rejectUnknownKeys(allowed: [String]) throws(ExtensionOptionsError) {
        for key in values.keys where !allowed.contains(key) {
            throw ExtensionOptionsError(
                key: key, value: key, "unknown option; allowed: kind, name, \(allowed.joined(separator: ", "))")
        }
    }
}
