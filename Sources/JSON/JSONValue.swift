/// A JSON value that preserves what was written: numbers keep their text, objects keep their key order.
///
/// `==` and hashing are JSON equality: object key order aside, and numbers by value (`1 == 1.0`);
/// strings compare by their exact Unicode scalars.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept as written.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, in key order.
    case object(JSONObject)

    /// The deepest nesting of arrays and objects accepted by the parser (the top level counts as 1).
    public static let maximumDepth = 512

    /// The object, if this is one.
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The array, if this is one.
    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    /// The number, if this is one.
    public var numberValue: JSONNumber? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// The boolean, if this is one.
    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value at a path of object keys (no array indices); nil when a step is missing or not an object.
    public subscript(path path: [String]) -> JSONValue? {
        var current = self
        for key in path {
            guard case .object(let object) = current, let next = object[key] else { return nil }
            current = next
        }
        return current
    }

    /// The name of this value's JSON type, for messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number(let number): number.isInteger ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// JSON equality (see the type's documentation).
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): JSONObject.sameKey(a, b)
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }

    /// Hashes consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(1); hasher.combine(value)
        case .number(let value): hasher.combine(2); hasher.combine(value)
        case .string(let value): hasher.combine(3); hasher.combine(ExactString(value))
        case .array(let value): hasher.combine(4); hasher.combine(value)
        case .object(let value): hasher.combine(5); hasher.combine(value)
        }
    }

    /// Hashes a string by its UTF-8 bytes, matching exact string equality.
    struct ExactString: Hashable {
        /// The string.
        let string: String
        /// Wraps `string`.
        init(_ string: String) { self.string = string }
        /// Byte equality.
        static func == (lhs: ExactString, rhs: ExactString) -> Bool { JSONObject.sameKey(lhs.string, rhs.string) }
        /// Hashes the bytes.
        func hash(into hasher: inout Hasher) {
            hasher.combine(string.utf8.count)
            for byte in string.utf8 { hasher.combine(byte) }
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer number.
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    /// A number with a fraction.
    public init(floatLiteral value: Double) { self = .number(JSONNumber(value)) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object in the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text.
    public var description: String { compactText }
}
