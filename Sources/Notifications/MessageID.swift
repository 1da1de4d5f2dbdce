/// The `apns-id` rules: the canonical form of a given identifier, and the identifier derived from a record's origin.
public enum MessageID {
    /// The RFC 4122 URL namespace, `6ba7b811-9dad-11d1-80b4-00c04fd430c8`.
    static let urlNamespace: [UInt8] = [
        0x6B, 0xA7, 0xB8, 0x11, 0x9D, 0xAD, 0x11, 0xD1, 0x80, 0xB4, 0x00, 0xC0, 0x4F, 0xD4, 0x30, 0xC8,
    ]

    /// The identifier of a request without `apns-id`: UUID version 5 in the URL namespace of
    /// `kafka://<topic>/<partition>/<offset>`, lowercase, so a re-delivered record keeps its identifier.
    public static func derived(for source: RecordSource) -> String {
        uuidV5(namespace: urlNamespace, name: "kafka://\(source.topic)/\(source.partition)/\(source.offset)")
    }

    /// A name-based UUID (version 5, SHA-1) in canonical lowercase form.
    static func uuidV5(namespace: [UInt8], name: String) -> String {
        var digest = SHA1.hash(namespace + Array(name.utf8))
        digest[6] = digest[6] & 0x0F | 0x50
        digest[8] = digest[8] & 0x3F | 0x80
        return format(digest.prefix(16))
    }

    /// The canonical lowercase form of a UUID given as 8-4-4-4-12 hexadecimal digits (any case), or nil.
    public static func normalized(_ text: some Collection<UInt8>) -> String? {
        guard text.count == 36 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        for (position, byte) in text.enumerated() {
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                bytes.append(byte)
            } else {
                guard let lower = Hex.lowercased(byte) else { return nil }
                bytes.append(lower)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Formats 16 bytes as 8-4-4-4-12 lowercase hexadecimal.
    private static func format(_ bytes: ArraySlice<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (position, byte) in bytes.enumerated() {
            if position == 4 || position == 6 || position == 8 || position == 10 { text.append(UInt8(ascii: "-")) }
            text.append(Hex.digits[Int(byte >> 4)])
            text.append(Hex.digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// Hexadecimal helpers.
enum Hex {
    /// Lowercase digits.
    static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The lowercase form of a hexadecimal digit, or nil if `byte` is not one.
    static func lowercased(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): byte
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte | 0x20
        default: nil
        }
    }
}
