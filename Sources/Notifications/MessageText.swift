/// Formats values for the sentences of rejections: quoted, with long values cut short. Package
/// access: the dispatcher's own rejections (`UnknownAction`) quote values the same way.
package enum MessageText {
    /// The most characters of a value shown in a message.
    static let maximumLength = 64

    /// A string in quotes, cut to `maximumLength` characters with an ellipsis.
    package static func quote(_ text: String) -> String {
        "\"\(truncate(text))\""
    }

    /// Raw bytes shown as text (invalid UTF-8 repaired), quoted and cut short.
    static func quote(bytes: [UInt8]) -> String {
        quote(String(decoding: bytes, as: UTF8.self))
    }

    /// A JSON value as compact JSON, cut short.
    static func quote(_ value: JSONValue) -> String {
        if case .string(let string) = value { return quote(string) }
        return truncate(value.compactText)
    }

    /// `text` cut to `maximumLength` characters, with `…` marking the cut.
    static func truncate(_ text: String) -> String {
        guard text.count > maximumLength else { return text }
        return String(text.prefix(maximumLength)) + "…"
    }
}
