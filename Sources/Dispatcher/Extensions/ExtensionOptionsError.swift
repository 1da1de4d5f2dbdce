/// Options a kind refuses: names the option key (relative to the step) and the value.
public struct ExtensionOptionsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The option's key inside the step (`set`, `url`...), nil for the step as a whole.
    public let key: String?
    /// The offending value, when there is one.
    public let value: String?
    /// What is wrong, for a person.
    public let message: String

    /// Creates an error about option `key`.
    public init(key: String?, value: String? = nil, _ message: String) {
        self.key = key
        self.value = value
        self.message = message
    }

    public var description: String {
        let place = key.map { "option \($0)" } ?? "options"
        return value.map { "\(place): \(message) (value: \($0))" } ?? "\(place): \(message)"
    }
}
