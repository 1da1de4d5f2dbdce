import JSON
import Notifications

extension JSONObject {
    /// Sets `value` at `path`, creating missing intermediate objects.
    /// - Throws: `PathThroughNonObject` when an intermediate value exists and is not an object.
    mutating func set(_ value: JSONValue, at path: DottedPath) throws(PathThroughNonObject) {
        try set(value, keys: path.keys[...], path: path)
    }

    /// Removes the value at `path`; a missing path does nothing.
    /// - Throws: `PathThroughNonObject` when an intermediate value exists and is not an object.
    mutating func remove(at path: DottedPath) throws(PathThroughNonObject) {
        try remove(keys: path.keys[...], path: path)
    }

    private mutating func set(_ value: JSONValue, keys: ArraySlice<String>, path: DottedPath) throws(PathThroughNonObject) {
        guard let key = keys.first else { return }
        if keys.count == 1 {
            self[key] = value
            return
        }
        var child: JSONObject
        switch self[key] {
        case nil:
            child = JSONObject()
        case .object(let object):
            child = object
        case .some(let other):
            throw PathThroughNonObject(path: path, blockedAt: Self.prefix(path, keys), found: other.typeName)
        }
        try child.set(value, keys: keys.dropFirst(), path: path)
        self[key] = .object(child)
    }

    private mutating func remove(keys: ArraySlice<String>, path: DottedPath) throws(PathThroughNonObject) {
        guard let key = keys.first else { return }
        if keys.count == 1 {
            removeValue(forKey: key)
            return
        }
        switch self[key] {
        case nil:
            return
        case .object(var child):
            try child.remove(keys: keys.dropFirst(), path: path)
            self[key] = .object(child)
        case .some(let other):
            throw PathThroughNonObject(path: path, blockedAt: Self.prefix(path, keys), found: other.typeName)
        }
    }

    /// The part of `path` up to and including the first of `remaining`.
    private static func prefix(_ path: DottedPath, _ remaining: ArraySlice<String>) -> String {
        path.keys[..<(remaining.startIndex + 1)].joined(separator: ".")
    }
}
