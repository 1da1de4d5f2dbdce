import JSON

/// Formats values for the sentences of rejections: quoted, with long values cut short. Package
/// access: the dispatcher's own rejections (`UnknownAction`) quote values the same way.
package enum MessageText {
    /// The most Unicode scalars of a value shown in a message.
    static let maximumLength = 64

    /// A string in quotes, cut to `maximumLength` Unicode scalars with an ellipsis.
    package static func quote(_ text: String) -> String {
        "\"\(truncate(text))\""
    }

    /// Raw bytes shown as text (invalid UTF-8 repaired), quoted and cut short.
    static func quote(bytes: some Collection<UInt8>) -> String {
        quote(String(decoding: bytes, as: UTF8.self))
    }

    /// A JSON value as compact JSON, cut short.
    static func quote(_ value: JSONValue) -> String {
        if case .string(let string) = value { return quote(string) }
        return truncate(value.compactText)
    }

    /// `text` cut to `maximumLength` Unicode scalars, with `…` marking the cut.
    ///
    /// Counted in scalars, not Characters: one Character may hold any number of combining
    /// scalars (a value of 300,000 combining marks is one Character), so a cut by Characters
    /// would bound nothing.
    static func truncate(_ text: String) -> String {
        text.prefix(unicodeScalars: maximumLength)
    }
}

extension String {
    /// The string cut to at most `limit` Unicode scalars, with `…` added when anything was cut.
    package func prefix(unicodeScalars limit: Int) -> String {
        let scalars = unicodeScalars
        guard let end = scalars.index(scalars.startIndex, offsetBy: limit, limitedBy: scalars.endIndex),
            end != scalars.endIndex
        else { return self }
        return String(scalars[..<end]) + "…"
    }

    /// The string cut to at most `limit` bytes of UTF-8 at a scalar boundary, with `…` (3 bytes,
    /// within the limit) added when anything was cut.
    package func prefix(utf8Bytes limit: Int) -> String {
        guard utf8.count > limit else { return self }
        let budget = max(0, limit - 3)
        var used = 0
        var end = unicodeScalars.startIndex
        for index in unicodeScalars.indices {
            let width = UTF8.width(unicodeScalars[index])
            guard used + width <= budget else { break }
            used += width
            end = unicodeScalars.index(after: index)
        }
        return String(unicodeScalars[..<end]) + "…"
    }
}
