import Dispatcher

/// A JSON line that is not a request record of the documented shape.
package struct JSONLineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, for a person.
    package let message: String

    /// Creates an error.
    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
