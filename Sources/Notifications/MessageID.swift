package import Records
/// The `apns-id` rules: the canonical form of a given identifier, and the identifier derived from a record's origin.
package enum MessageID {
    /// The RFC 4122 URL namespace, `6ba7b811-9dad-11d1-80b4-00c04fd430c8`.
    static let urlNamespace: [UInt8] = [
        0x6B, 0xA7, 0xB8, 0x11, 0x9D, 0xAD, 0x11, 0xD1, 0x80, 0xB4, 0x00, 0xC0, 0x4F, 0xD4, 0x30, 0xC8,
    ]

    /// The identifier of a request without `apns-id`: UUID version 5 in the URL namespace of
    /// `kafka://<topic>/<partition>/<offset>`, lowercase, so a re-delivered record keeps its identifier.
    package static func derived(for source: TopicPartitionOffset) -> String {
        var topic = source.topic
        return topic.withUTF8 { topicBytes in
            // namespace + "kafka://" + topic + "/" + partition (≤ 11) + "/" + offset (≤ 20)
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16 + 8 + topicBytes.count + 34) { buffer in
                var length = 0
                func append(_ byte: UInt8) {
                    buffer[length] = byte
                    length += 1
                }
                func append(decimal value: Int64) {
                    if value < 0 { append(UInt8(ascii: "-")) }
                    var magnitude = value.magnitude
                    let start = length
                    repeat {
                        append(UInt8(ascii: "0") + UInt8(magnitude % 10))
                        magnitude /= 10
                    } while magnitude > 0
                    buffer[start..<length].reverse()
                }
                for byte in urlNamespace { append(byte) }
                for byte in "kafka://".utf8 { append(byte) }
                for byte in topicBytes { append(byte) }
                append(UInt8(ascii: "/"))
                append(decimal: Int64(source.partition))
                append(UInt8(ascii: "/"))
                append(decimal: source.offset)
                let digest = SHA1.digest(of: UnsafeRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[0..<length]))
                return format(digest)
            }
        }
    }

    /// A name-based UUID (version 5, SHA-1) in canonical lowercase form.
    static func uuidV5(namespace: [UInt8], name: String) -> String {
        (namespace + Array(name.utf8)).withUnsafeBytes { format(SHA1.digest(of: $0)) }
    }

    /// The canonical lowercase form of a UUID given as 8-4-4-4-12 hexadecimal digits (any case), or nil.
    package static func normalized(_ text: some Collection<UInt8>) -> String? {
        guard text.count == 36 else { return nil }
        // Written straight into the string's storage: one allocation, no byte array first.
        var isUUID = true
        let normalized = String(unsafeUninitializedCapacity: 36) { buffer in
            for (position, byte) in text.enumerated() {
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard byte == UInt8(ascii: "-") else {
                        isUUID = false
                        return 0
                    }
                    buffer[position] = byte
                } else {
                    guard let lower = Hex.lowercased(byte) else {
                        isUUID = false
                        return 0
                    }
                    buffer[position] = lower
                }
            }
            return 36
        }
        return isUUID ? normalized : nil
    }

    /// Formats the first 16 bytes of a digest as 8-4-4-4-12 lowercase hexadecimal, with the version
    /// (5) and RFC 4122 variant bits set.
    private static func format(_ digest: SHA1.Digest) -> String {
        let high = UInt64(digest.0) << 32 | UInt64(digest.1)
        let low = UInt64(digest.2) << 32 | UInt64(digest.3)
        let versioned = high & ~0xF000 | 0x5000
        let varianted = low & ~(0xC000 << 48) | (0x8000 << 48)
        return String(unsafeUninitializedCapacity: 36) { text in
            var position = 0
            func write(_ word: UInt64) {
                for nibble in (0..<16).reversed() {
                    if position == 8 || position == 13 || position == 18 || position == 23 {
                        text[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    let digit = UInt8(truncatingIfNeeded: word >> (UInt64(nibble) * 4) & 0xF)
                    text[position] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
                    position += 1
                }
            }
            write(versioned)
            write(varianted)
            return position
        }
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
