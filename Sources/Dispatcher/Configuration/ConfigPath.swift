import Foundation

/// A key path in the configuration, printed so that keys containing dots stay readable:
/// `apps["com.example.app"].categories.NEWS.deadline`, `apps["com.example.app"].serviceExtension[1].kind`.
struct ConfigPath: Sendable, Hashable, CustomStringConvertible {
    /// One step of the path: a mapping key or a list index.
    enum Component: Sendable, Hashable {
        /// A mapping key.
        case key(String)
        /// A list index.
        case index(Int)
    }

    /// The steps from the root.
    private(set) var components: [Component]

    /// The root path (the whole file).
    static let root = ConfigPath(components: [])

    /// The path of `key` inside this mapping.
    func appending(_ key: String) -> ConfigPath {
        ConfigPath(components: components + [.key(key)])
    }

    /// The path of element `index` inside this list.
    func appending(index: Int) -> ConfigPath {
        ConfigPath(components: components + [.index(index)])
    }

    /// `path` (already rendered) followed by `key`, rendered the same way.
    static func render(_ path: String, appending key: String) -> String {
        let keyText = ConfigPath(components: [.key(key)]).description
        guard !path.isEmpty else { return keyText }
        return isPlain(key) ? "\(path).\(keyText)" : path + keyText
    }

    var description: String {
        if components.isEmpty { return "(root)" }
        var text = ""
        for component in components {
            switch component {
            case .key(let key) where Self.isPlain(key):
                text += text.isEmpty ? key : ".\(key)"
            case .key(let key):
                text += "[\"\(key.replacingOccurrences(of: "\"", with: "\\\""))\"]"
            case .index(let index):
                text += "[\(index)]"
            }
        }
        return text
    }

    /// Whether a key can be printed bare: letters, digits, `_` and `-`, not starting with a digit.
    private static func isPlain(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return key.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                || scalar == "_" || scalar == "-"
        }
    }
}
