import JSON
import Notifications
import Yams

/// Converts YAML (an extension step's options) to JSON: mappings to objects in written order,
/// sequences to arrays, scalars by their resolved tag.
enum YAMLJSON {
    /// The JSON form of `node`.
    static func value(_ node: Node, at path: ConfigPath) throws(ConfigurationError) -> JSONValue {
        switch node {
        case .scalar(let scalar):
            return try self.scalar(scalar, at: path)
        case .sequence(let sequence):
            var elements: [JSONValue] = []
            for (index, element) in sequence.enumerated() {
                elements.append(try value(element, at: path.appending(index: index)))
            }
            return .array(elements)
        case .mapping(let mapping):
            var object = JSONObject()
            for (keyNode, valueNode) in mapping {
                guard case .scalar(let key) = keyNode else {
                    throw ConfigurationError(.wrongType, at: path.description, "keys must be strings")
                }
                object[key.string] = try value(valueNode, at: path.appending(key.string))
            }
            return .object(object)
        case .alias:
            throw ConfigurationError(.wrongType, at: path.description, "aliases are not supported here")
        }
    }

    private static func scalar(_ scalar: Node.Scalar, at path: ConfigPath) throws(ConfigurationError) -> JSONValue {
        let text = scalar.string
        switch scalar.resolvedTagName {
        case .null:
            return .null
        case .bool:
            guard let value = Node.scalar(scalar).bool else { break }
            return .bool(value)
        case .int:
            if let number = JSONNumber(text: text) { return .number(number) }
            guard let value = Node.scalar(scalar).int else { break }
            return .number(JSONNumber(value))
        case .float:
            if let number = JSONNumber(text: text) { return .number(number) }
            guard let value = Node.scalar(scalar).float, value.isFinite else { break }
            return .number(JSONNumber(value))
        default:
            return .string(text)
        }
        throw ConfigurationError(.invalidValue, at: path.description, value: text, "a value JSON cannot represent")
    }
}
