import COpenSSLDigest
package import JSON
package import Records

/// An `apns-id`: a UUID, kept as its 16 bytes and written as lowercase 8-4-4-4-12 hexadecimal only
/// where an output needs its text, so that validating a request makes no string for it (a derived
/// identifier's string was a seventh of `bench validation`'s time: its digits, its allocation and
/// the UTF-8 check of a new `String`).
public struct MessageID: Sendable, Hashable, CustomStringConvertible {
    /// The 16 bytes, in order: the first eight (big-endian) in `high`.
    private let high: UInt64
    /// The last eight (big-endian).
    private let low: UInt64

    /// The identifier of two halves.
    private init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The identifier of `bytes` (16 of them).
    private init(_ bytes: UnsafeRawBufferPointer) {
        high = UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
        low = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    /// The identifier written as 8-4-4-4-12 hexadecimal digits (any case), or nil.
    package init?(text: RecordBytes) {
        guard let id = text.withUnsafeBufferPointer(MessageID.init(digits:)) else { return nil }
        self = id
    }

    /// The identifier written as text, as ``init(text:)`` reads it.
    package init?(_ text: String) {
        var text = text
        guard let id = text.withUTF8(MessageID.init(digits:)) else { return nil }
        self = id
    }

    /// The identifier of the 8-4-4-4-12 hexadecimal digits (any case) in `text`, or nil.
    /// Parses the canonical text of a UUID where it lies (an `apns-id` header's value).
    package init?(digits text: UnsafeRawBufferPointer) {
        self.init(digits: text.assumingMemoryBound(to: UInt8.self))
    }

    private init?(digits text: UnsafeBufferPointer<UInt8>) {
        let dash = UInt8(ascii: "-")
        guard text.count == 36, text[8] == dash, text[13] == dash, text[18] == dash, text[23] == dash, let base = text.baseAddress
        else { return nil }
        // Eight digits at a time (a given apns-id's digits, one at a time, were 600 instructions a
        // record under callgrind): the groups of 4 between the dashes are read as two words that
        // overlap the dash, which the shift drops.
        let raw = UnsafeRawPointer(base)
        func word(at offset: Int) -> UInt64 { raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
        // 9-12 and 14-17 (digits 9 to 16): the bytes at 9 and 14, the dash between them skipped.
        let middle = word(at: 9) & 0xFFFF_FFFF | word(at: 14) << 32
        let last = word(at: 19) & 0xFFFF_FFFF | word(at: 24) << 32
        guard let first = Self.value(ofDigits: word(at: 0)), let second = Self.value(ofDigits: middle),
            let third = Self.value(ofDigits: last), let fourth = Self.value(ofDigits: word(at: 28))
        else { return nil }
        high = UInt64(first) << 32 | UInt64(second)
        low = UInt64(third) << 32 | UInt64(fourth)
    }

    /// The value of eight hexadecimal digits (any case) loaded as a little-endian word (the first
    /// digit in the lowest byte, the most significant), or nil when one is not a digit.
    @inline(__always)
    private static func value(ofDigits word: UInt64) -> UInt32? {
        let (lower, allHex) = Hex.folded(word: word)
        guard allHex else { return nil }
        let ones: UInt64 = 0x0101_0101_0101_0101
        // '0'-'9' are 0x30-0x39 and 'a'-'f' 0x61-0x66: the low four bits, plus 9 for a letter.
        var nibbles = (lower & (ones &* 0x0F)) &+ ((lower >> 6) & ones) &* 9
        // Pairs, then fours, then the eight: each step puts the earlier (lower) part above the later.
        nibbles = (nibbles & 0x000F_000F_000F_000F) << 4 | (nibbles & 0x0F00_0F00_0F00_0F00) >> 8
        nibbles = (nibbles & 0x0000_00FF_0000_00FF) << 8 | (nibbles & 0x00FF_0000_00FF_0000) >> 16
        nibbles = (nibbles & 0x0000_0000_0000_FFFF) << 16 | (nibbles & 0x0000_FFFF_0000_0000) >> 32
        return UInt32(truncatingIfNeeded: nibbles)
    }

    /// The RFC 4122 URL namespace, `6ba7b811-9dad-11d1-80b4-00c04fd430c8`.
    static let urlNamespace: [UInt8] = [
        0x6B, 0xA7, 0xB8, 0x11, 0x9D, 0xAD, 0x11, 0xD1, 0x80, 0xB4, 0x00, 0xC0, 0x4F, 0xD4, 0x30, 0xC8,
    ]

    /// The identifier of a request without `apns-id`: UUID version 5 in the URL namespace of
    /// `kafka://<topic>/<partition>/<offset>`, so a re-delivered record keeps its identifier.
    package static func derived(for source: TopicPartitionOffset) -> MessageID {
        derived(topic: source.topic, partition: source.partition, offset: source.offset)
    }

    /// ``derived(for:)`` of the record at `offset` in `topic`'s `partition`.
    package static func derived(topic: String, partition: Int32, offset: Int64) -> MessageID {
        var topic = topic
        return topic.withUTF8 { derived(topicBytes: UnsafeRawBufferPointer($0), partition: partition, offset: offset) }
    }

    /// ``derived(for:)`` of the record at `offset` in the `partition` of the topic named by
    /// `topicBytes` (UTF-8).
    package static func derived(topicBytes: UnsafeRawBufferPointer, partition: Int32, offset: Int64) -> MessageID {
        // namespace + "kafka://" + topic + "/" + partition (≤ 11) + "/" + offset (≤ 20)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16 + 8 + topicBytes.count + 34) { buffer in
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
            append(decimal: Int64(partition))
            append(UInt8(ascii: "/"))
            append(decimal: offset)
            let name = UnsafeRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[0..<length])
            return versionFive(ofSHA1: name)
        }
    }

    /// A name-based UUID (version 5, SHA-1).
    static func uuidV5(namespace: [UInt8], name: String) -> MessageID {
        (namespace + Array(name.utf8)).withUnsafeBytes(versionFive(ofSHA1:))
    }

    /// The version 5 UUID of `name` (the namespace's bytes first): SHA-1 with the context and the
    /// digest on the stack.
    private static func versionFive(ofSHA1 name: UnsafeRawBufferPointer) -> MessageID {
        var context = SHA_CTX()
        var digest: (UInt64, UInt64, UInt32) = (0, 0, 0)
        // Init, Update and Final fail only on a null context.
        SHA1_Init(&context)
        SHA1_Update(&context, name.baseAddress, name.count)
        return withUnsafeMutableBytes(of: &digest) { digest in
            SHA1_Final(digest.baseAddress!.assumingMemoryBound(to: UInt8.self), &context)
            return versionFive(UnsafeRawBufferPointer(digest))
        }
    }

    /// The first 16 bytes of a SHA-1 digest with the version (5) and RFC 4122 variant bits set.
    private static func versionFive(_ digest: UnsafeRawBufferPointer) -> MessageID {
        let bits = MessageID(digest)
        return MessageID(high: bits.high & ~0xF000 | 0x5000, low: bits.low & ~(0xC0 << 56) | 0x80 << 56)
    }

    /// The canonical lowercase form of a UUID given as 8-4-4-4-12 hexadecimal digits (any case), or nil.
    package static func normalized(_ text: String) -> String? {
        MessageID(text)?.description
    }

    /// The lowercase 8-4-4-4-12 text.
    public var description: String {
        String(unsafeUninitializedCapacity: Self.textLength) { write(into: $0) }
    }

    /// The text's length in bytes.
    package static let textLength = 36

    /// Runs `body` with the text's bytes, written on the stack.
    package func withUTF8<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.textLength) { buffer in
            _ = write(into: buffer)
            return try body(UnsafeBufferPointer(buffer))
        }
    }

    /// The text's bytes.
    package var utf8: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.textLength) { buffer, count in count = write(into: buffer) }
    }

    /// Writes the text into `text` (36 bytes at least); its length.
    ///
    /// Eight digits at a time (``Hex/digits(of:)``): digit by digit, the text of every delivery's
    /// and every header's `apns-id` was 600 instructions each under callgrind.
    package func write(into text: UnsafeMutableBufferPointer<UInt8>) -> Int {
        precondition(text.count >= Self.textLength, "room for 36 characters")
        let base = UnsafeMutableRawPointer(text.baseAddress!)
        let first = Hex.digits(of: UInt32(truncatingIfNeeded: high >> 32))
        let second = Hex.digits(of: UInt32(truncatingIfNeeded: high))
        let third = Hex.digits(of: UInt32(truncatingIfNeeded: low >> 32))
        let fourth = Hex.digits(of: UInt32(truncatingIfNeeded: low))
        let dash = UInt8(ascii: "-")
        // 8-4-4-4-12: the digits of each group in text order (`bigEndian` puts the first in the
        // lowest address).
        base.storeBytes(of: first.bigEndian, as: UInt64.self)
        base.storeBytes(of: dash, toByteOffset: 8, as: UInt8.self)
        base.storeBytes(of: UInt32(truncatingIfNeeded: second >> 32).bigEndian, toByteOffset: 9, as: UInt32.self)
        base.storeBytes(of: dash, toByteOffset: 13, as: UInt8.self)
        base.storeBytes(of: UInt32(truncatingIfNeeded: second).bigEndian, toByteOffset: 14, as: UInt32.self)
        base.storeBytes(of: dash, toByteOffset: 18, as: UInt8.self)
        base.storeBytes(of: UInt32(truncatingIfNeeded: third >> 32).bigEndian, toByteOffset: 19, as: UInt32.self)
        base.storeBytes(of: dash, toByteOffset: 23, as: UInt8.self)
        base.storeBytes(of: UInt32(truncatingIfNeeded: third).bigEndian, toByteOffset: 24, as: UInt32.self)
        base.storeBytes(of: fourth.bigEndian, toByteOffset: 28, as: UInt64.self)
        return Self.textLength
    }
}

extension JSONWriter {
    /// Appends an `apns-id` as a JSON string, straight from its bytes: its text needs no escaping.
    package mutating func write(messageID: MessageID) {
        write(upTo: MessageID.textLength + 2) { room in
            room[0] = UInt8(ascii: "\"")
            let length = messageID.write(into: UnsafeMutableBufferPointer(rebasing: room.bindMemory(to: UInt8.self)[1...]))
            room[length + 1] = UInt8(ascii: "\"")
            return length + 2
        }
    }
}

/// Hexadecimal helpers: the one place the package writes lowercase hex digits (`JSONWriter`, a
/// module below this one, keeps its own two for `\u00xx` escapes).
package enum Hex {
    /// The lowercase digit of a value below 16.
    @inline(__always)
    package static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value
    }

    /// The eight lowercase hexadecimal digits of `value`, as eight ASCII bytes of a `UInt64`
    /// whose most significant byte is the first digit (store its `bigEndian` for text order).
    ///
    /// The nibbles are spread one per byte with shifts and masks, and each becomes its digit with
    /// one addition: `'0'` for all, and 39 more (`'a'` − `'0'` − 10) where the nibble is 10 or
    /// more, which adding 6 carries into the byte's high half.
    @inline(__always)
    package static func digits(of value: UInt32) -> UInt64 {
        var spread = UInt64(value)
        spread = (spread | spread << 16) & 0x0000_FFFF_0000_FFFF
        spread = (spread | spread << 8) & 0x00FF_00FF_00FF_00FF
        spread = (spread | spread << 4) & 0x0F0F_0F0F_0F0F_0F0F
        let letters = ((spread &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return spread &+ 0x3030_3030_3030_3030 &+ letters &* 39
    }

    /// `bytes` as lowercase hex, two digits per byte (a digest's usual text).
    package static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(digit(byte >> 4))
            text.append(digit(byte & 0x0F))
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `byte` with the lowercase bit (0x20) set, and whether it is a hexadecimal digit, without a
    /// branch (the bytes of a device token past its last whole word): a digit already has that bit,
    /// so setting it lowercases A-F and keeps 0-9.
    @inline(__always)
    static func folded(_ byte: UInt8) -> (lower: UInt8, isHex: Bool) {
        let lower = byte | 0x20
        return (lower, byte &- UInt8(ascii: "0") < 10 || lower &- UInt8(ascii: "a") < 6)
    }

    /// ``folded(_:)`` for the eight bytes of `word` at once: each byte with the lowercase bit set,
    /// and whether all eight are hexadecimal digits.
    ///
    /// Once no byte has its high bit, adding `0x80 - low` to a byte carries into its high bit exactly
    /// when it is at least `low`, and nothing carries into the next byte; so one addition per bound
    /// tests all eight against a range.
    @inline(__always)
    static func folded(word: UInt64) -> (lower: UInt64, allHex: Bool) {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs = ones &* 0x80
        let lower = word | ones &* 0x20
        // A digit is tested before the fold: 0x10-0x19 would fold into 0x30-0x39.
        let digit = (word &+ ones &* (0x80 - 0x30)) & ~(word &+ ones &* (0x7F - 0x39))
        let letter = (lower &+ ones &* (0x80 - 0x61)) & ~(lower &+ ones &* (0x7F - 0x66))
        return (lower, word & highs == 0 && (digit | letter) & highs == highs)
    }
}
