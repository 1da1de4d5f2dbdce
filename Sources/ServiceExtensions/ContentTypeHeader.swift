/// What a response's `Content-Type` says about an attachment before any byte is read.
enum ContentTypeHeader: Sendable, Hashable {
    /// No header, or a generic binary type: the bytes alone decide.
    case unspecified
    /// `image/*`, `audio/*` or `video/*`.
    case media(MediaKind)
    /// Anything else (`text/html`, `application/json`...): refused.
    case other(String)

    /// Classifies the header value `value` (parameters such as `; charset=` are ignored).
    init(_ value: String?) {
        guard let value else {
            self = .unspecified
            return
        }
        let mediaType = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        let essence = mediaType.trimming(" \t").lowercased()
        if essence.isEmpty || essence == "application/octet-stream" || essence == "binary/octet-stream" {
            self = .unspecified
        } else if let slash = essence.firstIndex(of: "/"), let kind = MediaKind(rawValue: String(essence[..<slash])) {
            self = .media(kind)
        } else {
            // Keep what is echoed in a failure short and printable.
            self = .other(String(essence.prefix(100).unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 }.map(Character.init)))
        }
    }

    /// The kind the header names, if any.
    var kind: MediaKind? {
        if case .media(let kind) = self { return kind }
        return nil
    }
}

extension String {
    /// The string without leading and trailing characters of `characters`.
    fileprivate func trimming(_ characters: String) -> String {
        var text = Substring(self)
        while let first = text.first, characters.contains(first) { text.removeFirst() }
        while let last = text.last, characters.contains(last) { text.removeLast() }
        return String(text)
    }
}
