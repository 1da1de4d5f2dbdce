import Yams

/// A YAML mapping read key by key: it remembers which keys were read so that every other key can
/// be reported as unknown, and (for the scalar sections) lets environment variables override keys.
struct ConfigMapping {
    /// Where the mapping is.
    let path: ConfigPath
    /// The keys and values in file order.
    private let entries: [(key: String, node: Node)]
    /// The keys read so far.
    private var consumed: Set<String> = []
    /// The environment and the variable-name prefix of this section, when it takes overrides.
    private let overrides: (environment: [String: String], prefix: String)?

    /// Reads `node` as a mapping at `path`; nil or YAML null is an empty mapping.
    init(
        _ node: Node?,
        at path: ConfigPath,
        environment: [String: String]? = nil,
        environmentPrefix: String = ""
    ) throws(ConfigurationError) {
        self.path = path
        self.overrides = environment.map { ($0, environmentPrefix) }
        guard let node else {
            entries = []
            return
        }
        switch node {
        case .mapping(let mapping):
            var entries: [(key: String, node: Node)] = []
            var seen: Set<String> = []
            for (keyNode, valueNode) in mapping {
                guard case .scalar(let keyScalar) = keyNode else {
                    throw ConfigurationError(.wrongType, at: path.description, "keys must be strings")
                }
                let key = keyScalar.string
                guard seen.insert(key).inserted else {
                    throw ConfigurationError(
                        .invalidValue, at: path.appending(key).description, value: key, "the key is written twice")
                }
                entries.append((key, valueNode))
            }
            self.entries = entries
        case .scalar(let scalar) where scalar.resolvedTagName == .null:
            entries = []
        default:
            throw ConfigurationError(.wrongType, at: path.description, "expected a mapping of keys to values")
        }
    }

    /// The keys in file order.
    var keys: [String] { entries.map(\.key) }

    /// The node at `key`, marking the key as read; nil when absent.
    mutating func node(_ key: String) -> Node? {
        consumed.insert(key)
        return entries.first { $0.key == key }?.node
    }

    /// The scalar at `key` (the environment's value first, when this section takes overrides);
    /// nil when absent or YAML null.
    mutating func scalar(_ key: String) throws(ConfigurationError) -> ConfigScalar? {
        let keyPath = path.appending(key)
        let fileNode = node(key)
        if let overrides {
            let variable = overrides.prefix + Self.upperSnakeCase(key)
            if let text = overrides.environment[variable] {
                return ConfigScalar(environmentText: text, location: "\(variable) (\(keyPath))")
            }
        }
        guard let fileNode else { return nil }
        guard case .scalar(let scalar) = fileNode else {
            throw ConfigurationError(.wrongType, at: keyPath.description, "expected a single value, not a list or mapping")
        }
        let value = ConfigScalar(node: scalar, location: keyPath.description)
        return value.isNull ? nil : value
    }

    /// The required scalar at `key`.
    mutating func requiredScalar(_ key: String) throws(ConfigurationError) -> ConfigScalar {
        guard let value = try scalar(key) else {
            throw ConfigurationError(.missingValue, at: path.appending(key).description, "a value is required")
        }
        return value
    }

    /// Throws for the first key that was never read.
    func rejectUnknownKeys(allowed: [String]) throws(ConfigurationError) {
        for entry in entries where !consumed.contains(entry.key) {
            throw ConfigurationError(
                .unknownKey, at: path.appending(entry.key).description, value: entry.key,
                "unknown key; allowed here: \(allowed.joined(separator: ", "))")
        }
    }

    /// `bootstrapServers` → `BOOTSTRAP_SERVERS`: the environment spelling of a key.
    static func upperSnakeCase(_ key: String) -> String {
        var result = ""
        for character in key {
            if character.isUppercase, !result.isEmpty { result.append("_") }
            result += character.uppercased()
        }
        return result
    }
}
