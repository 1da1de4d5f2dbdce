import Foundation
import Yams

/// One scalar setting as written, in the file or in an environment variable, with typed readers
/// that refuse values of the wrong type with a message naming where the value came from.
struct ConfigScalar {
    /// The text as written.
    let text: String
    /// The YAML tag the value resolved to; nil for an environment variable (plain text).
    let tag: Tag.Name?
    /// Where the value is written, for messages: a key path, or `VARIABLE (key.path)`.
    let location: String

    /// A scalar read from the file.
    init(node: Node.Scalar, location: String) {
        self.text = node.string
        self.tag = node.resolvedTagName
        self.location = location
    }

    /// A scalar read from an environment variable.
    init(environmentText: String, location: String) {
        self.text = environmentText
        self.tag = nil
        self.location = location
    }

    /// Whether the value is YAML null (`~`, `null` or nothing); never for an environment variable.
    var isNull: Bool { tag == .null }

    /// An error about this value.
    func error(_ code: ConfigurationError.Code, _ message: String) -> ConfigurationError {
        ConfigurationError(code, at: location, value: tag == .str ? "\"\(text)\"" : text, message)
    }

    /// The value as a string; numbers and booleans from the file are refused.
    func string() throws(ConfigurationError) -> String {
        guard tag == nil || tag == .str else { throw error(.wrongType, "expected a string") }
        return text
    }

    /// The value as a non-empty string.
    func nonEmptyString() throws(ConfigurationError) -> String {
        let value = try string()
        guard !value.isEmpty else { throw error(.invalidValue, "must not be empty") }
        return value
    }

    /// The value as an integer in `range`.
    func int(in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        let value: Int?
        if let tag {
            guard tag == .int else { throw error(.wrongType, "expected an integer") }
            value = Int(text.replacingOccurrences(of: "_", with: ""))
        } else {
            value = Int(text.trimmingWhitespace())
        }
        guard let value else { throw error(.wrongType, "expected an integer") }
        guard range.contains(value) else {
            throw error(.invalidValue, "must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }

    /// The value as a number (integer or decimal).
    func double() throws(ConfigurationError) -> Double {
        if let tag, tag != .int, tag != .float { throw error(.wrongType, "expected a number") }
        guard let value = Double(text.trimmingWhitespace()), value.isFinite else {
            throw error(.wrongType, "expected a number")
        }
        return value
    }

    /// The value as a boolean (`true` or `false`).
    func bool() throws(ConfigurationError) -> Bool {
        if let tag, tag != .bool { throw error(.wrongType, "expected true or false") }
        switch text.trimmingWhitespace().lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw error(.wrongType, "expected true or false")
        }
    }

    /// The longest duration any setting takes: every duration is later turned into nanoseconds,
    /// milliseconds or timer deadlines, which a day keeps far from overflowing.
    static let longestDuration: Duration = .seconds(86_400)

    /// The value as a duration (`500ms`, `30s`, `1m`, `1h`) of at most `maximum`; a bare number is refused.
    func duration(allowZero: Bool = false, maximum: Duration = longestDuration) throws(ConfigurationError) -> Duration {
        if tag == .int || tag == .float {
            throw error(.wrongType, "a bare number is not a duration: add a unit (ms, s, m or h), e.g. \(text)s")
        }
        guard tag == nil || tag == .str, let value = DurationText.parse(text) else {
            throw error(.wrongType, "expected a duration: a number with ms, s, m or h, e.g. 30s or 500ms")
        }
        guard allowZero || value > .zero else { throw error(.invalidValue, "must be longer than 0") }
        guard value <= maximum else { throw error(.invalidValue, "must be at most \(DurationText.spell(maximum))") }
        return value
    }

    /// The value as a size in bytes of at most `maximum`: a positive whole number, or a number with
    /// a unit (`24MiB`, `512KiB`, `1.5GB`: ``ByteSizeText``).
    func byteSize(maximum: Int) throws(ConfigurationError) -> Int {
        guard tag == nil || tag == .int || tag == .str, let bytes = ByteSizeText.parse(text.replacingOccurrences(of: "_", with: "")) else {
            throw error(.wrongType, "expected a size in bytes: a whole number, or a number with B, KiB, MiB, GiB, kB, MB or GB, e.g. 24MiB")
        }
        guard bytes > 0 else { throw error(.invalidValue, "must be at least 1 byte") }
        guard bytes <= maximum else { throw error(.invalidValue, "must be at most \(ByteSizeText.spell(maximum))") }
        return bytes
    }

    /// The value as one case of `Value`, listing the allowed spellings when it is none of them.
    func choice<Value: RawRepresentable & CaseIterable>(_: Value.Type) throws(ConfigurationError) -> Value
    where Value.RawValue == String {
        let raw = try string()
        guard let value = Value(rawValue: raw) else {
            let allowed = Value.allCases.map(\.rawValue).joined(separator: ", ")
            throw error(.invalidValue, "expected one of \(allowed)")
        }
        return value
    }
}

extension Node.Scalar {
    /// The tag the scalar resolves to (`str`, `int`, `float`, `bool`, `null`...).
    var resolvedTagName: Tag.Name { Tag.Name(rawValue: Node.scalar(self).tag.rawValue) }
}
