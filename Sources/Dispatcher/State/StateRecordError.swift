/// Why a record of a state table's topic (channels, activities, stored) was ignored: a sentence
/// for the log, naming the field but never its value (values may carry personal data).
public struct StateRecordError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public let message: String

    /// An error saying `message`.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
