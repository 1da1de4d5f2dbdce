/// Why a devices record was ignored: a sentence for the log, naming the field but never its value
/// (values may carry personal data).
package struct DeviceEntryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    package let message: String

    /// An error saying `message`.
    package init(_ message: String) {
        self.message = message
    }

    /// The message.
    package var description: String { message }
}
