/// Hexadecimal for the test vectors, written here so the tests share no code with what they test.
enum Hex {
    /// The bytes of `text`, two hex digits each (either case).
    static func bytes(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        precondition(digits.count.isMultiple(of: 2), "an odd number of hex digits")
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(value(digits[$0]) << 4 | value(digits[$0 + 1])) }
    }

    /// `bytes` as lowercase hex.
    static func text(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    private static func value(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: preconditionFailure("not a hex digit: \(digit)")
        }
    }
}
