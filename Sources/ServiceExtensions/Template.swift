import Foundation
import JSON
import Notifications

/// `{{path}}` substitution in the strings of a `rewrite` value.
enum Template {
    /// `value` with every `{{ path }}` in its strings (nested ones included) replaced by the value
    /// at that dotted path in `source`: a string as is, other JSON compactly, a missing path as "".
    static func render(_ value: JSONValue, from source: JSONObject) -> JSONValue {
        switch value {
        case .string(let text):
            return .string(render(text, from: source))
        case .array(let elements):
            return .array(elements.map { render($0, from: source) })
        case .object(let object):
            return .object(JSONObject(object.map { ($0.key, render($0.value, from: source)) }))
        case .null, .bool, .number:
            return value
        }
    }

    /// `text` with its placeholders replaced.
    static func render(_ text: String, from source: JSONObject) -> String {
        var result = ""
        var rest = Substring(text)
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            result += rest[..<open.lowerBound]
            let path = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            result += lookup(path, in: source)
            rest = rest[close.upperBound...]
        }
        return result + rest
    }

    private static func lookup(_ path: String, in source: JSONObject) -> String {
        let keys = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let found = JSONValue.object(source)[path: keys] else { return "" }
        if case .string(let string) = found { return string }
        return found.compactText
    }
}
