/// A JSON line that is not a request record of the documented shape.
public struct JSONLineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, for a person.
    public let message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
