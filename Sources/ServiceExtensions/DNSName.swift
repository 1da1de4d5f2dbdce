/// The syntax of DNS host names, shared by the URL check and `allowHosts`.
enum DNSName {
    /// Whether `text` is a plausible DNS host name: ASCII letters, digits, `-`, `_` and dots, no
    /// empty label, labels of at most 63 bytes, at most 253 bytes in all, an optional trailing dot.
    ///
    /// Internationalised names qualify in their `xn--` form only: what a resolver looks up.
    static func isValid(_ text: String) -> Bool {
        let name = text.hasSuffix(".") ? text.dropLast() : Substring(text)
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63
                && label.unicodeScalars.allSatisfy {
                    $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_")
                }
        }
    }
}
