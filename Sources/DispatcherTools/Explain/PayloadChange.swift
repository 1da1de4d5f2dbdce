import Dispatcher
package import JSON
import Notifications

/// One difference between two payloads, by dotted path: what a service extension changed.
package struct PayloadChange: Sendable, Hashable, CustomStringConvertible {
    /// How the value at the path changed.
    package enum Kind: String, Sendable, Hashable {
        /// The path is new.
        case added
        /// The path is gone.
        case removed
        /// The path has another value.
        case changed
    }

    /// The dotted path (`aps.alert.subtitle`).
    package let path: String
    /// How it changed.
    package let kind: Kind

    /// `path (kind)`.
    package var description: String { "\(path) (\(kind.rawValue))" }

    /// The changes from `old` to `new`, in `old`'s key order then the added keys; nested objects
    /// are compared key by key, other values as JSON (`1` equals `1.0`).
    package static func changes(from old: JSONObject, to new: JSONObject) -> [PayloadChange] {
        changes(from: old, to: new, prefix: "")
    }

    private static func changes(from old: JSONObject, to new: JSONObject, prefix: String) -> [PayloadChange] {
        var changes: [PayloadChange] = []
        for (key, oldValue) in old {
            let path = prefix + key
            switch (oldValue, new[key]) {
            case (_, nil):
                changes.append(PayloadChange(path: path, kind: .removed))
            case (.object(let oldObject), .object(let newObject)?):
                changes += Self.changes(from: oldObject, to: newObject, prefix: path + ".")
            case (_, let newValue?) where newValue != oldValue:
                changes.append(PayloadChange(path: path, kind: .changed))
            default:
                break
            }
        }
        for key in new.keys where old[key] == nil {
            changes.append(PayloadChange(path: prefix + key, kind: .added))
        }
        return changes
    }
}
