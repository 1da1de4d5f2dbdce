/// A configuration that cannot be used: names the key path, the offending value and what is wrong.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of mistake the configuration makes; decisions read this, never the message.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The file cannot be read.
        case unreadableFile
        /// The file is not valid YAML.
        case syntax
        /// A key that the configuration does not know.
        case unknownKey
        /// A value of the wrong type (a list where a string belongs, a bare number for a duration...).
        case wrongType
        /// A required value is missing.
        case missingValue
        /// A value of the right type that is not allowed (an unknown enum case, a number out of range...).
        case invalidValue
        /// A category claimed by two content extensions of one app.
        case duplicateCategory
        /// An action id written twice in one category.
        case duplicateAction
        /// A content extension's `actionResponses` key that is no action of the categories it presents.
        case unknownAction
        /// A service extension step whose `kind` is not registered.
        case unknownExtensionKind
        /// A service extension step whose options the kind refuses.
        case invalidExtensionOptions
    }

    /// The kind of mistake.
    public let code: Code
    /// Where it is: a key path such as `apps["com.example.app"].categories.NEWS.deadline`, or an
    /// environment variable name followed by the key path it sets.
    public let path: String
    /// The offending value as written, when there is one.
    public let value: String?
    /// What is wrong, for a person.
    public let message: String

    /// Creates an error at `path` about `value`.
    package init(_ code: Code, at path: String, value: String? = nil, _ message: String) {
        self.code = code
        self.path = path
        self.value = value
        self.message = message
    }

    public var description: String {
        if let value {
            return "\(path): \(message) (value: \(value))"
        }
        return "\(path): \(message)"
    }
}
