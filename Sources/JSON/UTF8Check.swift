/// UTF-8 validation (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
///
/// Hand-written because the standard library's `String(validating:as:)` is generic and, unspecialised,
/// looks up type metadata on every call; the parser checks each multi-byte sequence as it meets it.
package enum UTF8Check {
    /// The length of the valid sequence starting at `start` (whose first byte is 0x80 or above), or nil.
    @inline(__always)
    package static func sequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Int? {
        let lead = bytes[start]
        let length: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upper = 0x9F
        case 0xF0: length = 4; lower = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upper = 0x8F
        default: return nil
        }
        guard start + length <= bytes.count else { return nil }
        let second = bytes[start + 1]
        guard second >= lower, second <= upper else { return nil }
        for offset in 2..<max(2, length) where bytes[start + offset] & 0xC0 != 0x80 {
            return nil
        }
        return length
    }

    /// Whether all of `bytes` is valid UTF-8.
    package static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < bytes.count {
            if bytes[index] < 0x80 {
                index += 1
            } else if let length = sequenceLength(bytes, at: index) {
                index += length
            } else {
                return false
            }
        }
        return true
    }

    /// Bytes in memory (a header value, lent by its view) as a `String` when they are valid UTF-8, else nil.
    package static func string(_ buffer: UnsafeBufferPointer<UInt8>) -> String? {
        isValid(buffer) ? String(decoding: buffer, as: UTF8.self) : nil
    }
}
