/// A dotted path into a payload (`aps.alert.title`): object keys only, no array indices.
struct DottedPath: Sendable, Hashable, CustomStringConvertible {
    /// The keys from the payload's root.
    let keys: [String]

    /// Parses `text`; nil when it is empty or has an empty segment (`aps..title`).
    init?(_ text: String) {
        let keys = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !keys.isEmpty, !keys.contains(where: \.isEmpty) else { return nil }
        self.keys = keys
    }

    var description: String { keys.joined(separator: ".") }
}
