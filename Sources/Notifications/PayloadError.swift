import JSON

/// Why a JSON value is not a valid notification payload: the key path and what is wrong with its value.
public struct PayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The offending key path, dotted (`aps.alert.title-loc-args`); empty for the body itself.
    public let keyPath: String
    /// A sentence for a person naming the key path and the value.
    public let message: String

    /// Makes an error for `keyPath`.
    package init(keyPath: String, message: String) {
        self.keyPath = keyPath
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// A key with a value of the wrong JSON type.
    static func wrongType(_ keyPath: String, _ value: JSONValue, expected: String) -> PayloadError {
        PayloadError(
            keyPath: keyPath,
            message: "The payload key \(keyPath) must be \(expected), but it is the \(value.typeName) \(MessageText.quote(value))."
        )
    }
}
