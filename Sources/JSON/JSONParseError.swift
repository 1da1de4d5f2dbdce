/// Why bytes are not a JSON document, and where.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The byte offset where the problem was found.
    public let offset: Int
    /// What is wrong, for a person.
    public let message: String

    /// Makes an error at `offset`.
    package init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    /// The message with its offset.
    public var description: String { "\(message) at byte \(offset)" }
}
