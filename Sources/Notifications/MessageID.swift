import Crypto
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
                let name = UnsafeRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[0..<length])
                return Insecure.SHA1.hash(data: name).withUnsafeBytes(format)
            }
        }
    }

    /// A name-based UUID (version 5, SHA-1) in canonical lowercase form.
    static func uuidV5(namespace: [UInt8], name: String) -> String {
        Insecure.SHA1.hash(data: namespace + Array(name.utf8)).withUnsafeBytes(format)
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

    /// Formats the first 16 bytes of a SHA-1 digest as 8-4-4-4-12 lowercase hexadecimal, with the
    /// version (5) and RFC 4122 variant bits set.
    private static func format(_ digest: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: 36) { text in
            var position = 0
            for index in 0..<16 {
                var byte = digest[index]
                if index == 6 { byte = byte & 0x0F | 0x50 }
                if index == 8 { byte = byte & 0x3F | 0x80 }
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                text[position] = Hex.digit(byte >> 4)
                text[position + 1] = Hex.digit(byte & 0x0F)
                position += 2
            }
            return position
        }
    }
}

/// Hexadecimal helpers.
enum Hex {
    /// The lowercase digit of a value below 16.
    @inline(__always)
    static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value
    }

    /// The lowercase form of a hexadecimal digit, or nil if `byte` is not one.
    static func lowercased(_ byte: UInt8) -> UInt8? {
        let (lower, isHex) = folded(byte)
        return isHex ? lower : nil
    }

    /// `byte` with the lowercase bit (0x20) set, and whether it is a hexadecimal digit, without a
    /// branch (so a loop over a device token runs without one per byte): a digit already has that
    /// bit, so setting it lowercases A-F and keeps 0-9.
    @inline(__always)
    static func folded(_ byte: UInt8) -> (lower: UInt8, isHex: Bool) {
        let lower = byte | 0x20
        return (lower, byte &- UInt8(ascii: "0") < 10 || lower &- UInt8(ascii: "a") < 6)
    }
}
