/// A JSON number kept exactly as it was written, so `1.0` stays `1.0` and long integers are never rounded.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's text exactly as written, e.g. `1.0`, `-12e3`, `123456789012345678901234567890`.
    public let text: String

    /// Whether the number has neither a fraction nor an exponent; fixed when the number is made.
    public let isInteger: Bool

    /// Makes a number from its JSON text, or nil unless the text is valid JSON number syntax.
    public init?(text: String) {
        var text = text
        let shape = text.withUTF8 { JSONNumberSyntax.scan($0, from: 0) }
        guard let shape, shape.end == text.utf8.count else { return nil }
        self.text = text
        self.isInteger = shape.isInteger
    }

    /// Makes a number from an integer, written in decimal.
    public init(_ value: Int) {
        self.text = String(value)
        self.isInteger = true
    }

    /// Makes a number from a finite double in Swift's shortest round-tripping form; non-finite values become `0`.
    public init(_ value: Double) {
        guard value.isFinite else {
            self.text = "0"
            self.isInteger = true
            return
        }
        if value == value.rounded(.towardZero), abs(value) < 1e15 {
            self.text = String(Int64(value)) + ".0"
        } else {
            self.text = "\(value)".replacingExponentMarker()
        }
        self.isInteger = false
    }

    /// Trusts text the parser has already checked; internal so only checked text gets here.
    init(checkedText: String, isInteger: Bool) {
        self.text = checkedText
        self.isInteger = isInteger
    }

    /// The value as an `Int` when it is whole and fits exactly (`1.0` and `1e2` count: their value is whole).
    public var intValue: Int? {
        if isInteger { return Int(text) }
        let form = DecimalForm(text)
        guard form.exponent >= 0 else { return nil }
        guard form.digits.count + form.exponent <= 19 else { return nil }
        var value = 0
        for digit in form.digits + [UInt8](repeating: 0, count: form.exponent) {
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = form.negative
                ? shifted.subtractingReportingOverflow(Int(digit)) : shifted.addingReportingOverflow(Int(digit))
            guard !overflowA, !overflowB else { return nil }
            value = next
        }
        return value
    }

    /// The nearest `Double` (may round, or be infinite for huge exponents).
    public var doubleValue: Double { Double(text) ?? 0 }

    /// The written text.
    public var description: String { text }

    /// Whether the number's value is zero, however written (`0`, `-0`, `0.0`, `0e5`).
    public var isZero: Bool { DecimalForm(text).digits.isEmpty }

    /// JSON equality: same decimal value, whatever the spelling (`1 == 1.0 == 1e0`).
    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        lhs.text == rhs.text || lhs.numericallyEquals(rhs)
    }

    /// Hashes the canonical decimal form so equal values hash alike.
    public func hash(into hasher: inout Hasher) {
        DecimalForm(text).hash(into: &hasher)
    }

    /// Compares the exact decimal values.
    func numericallyEquals(_ other: JSONNumber) -> Bool {
        DecimalForm(text) == DecimalForm(other.text)
    }
}

extension String {
    /// Swift prints doubles as `1e+20`; JSON allows that, but `1e20` is the usual spelling.
    fileprivate func replacingExponentMarker() -> String {
        replacing("e+", with: "e")
    }
}

/// The exact decimal value of a JSON number: sign, significant digits without leading or trailing
/// zeros, and the power of ten of the last digit. Zero has no digits and no sign.
struct DecimalForm: Hashable {
    /// Whether the value is below zero.
    var negative: Bool
    /// The significant digits (0...9), first to last.
    var digits: [UInt8]
    /// The power of ten of the last digit.
    var exponent: Int

    /// Reads valid JSON number text (the caller guarantees the syntax).
    init(_ text: String) {
        var digits: [UInt8] = []
        var negative = false
        var exponent = 0
        var fractionDigits = 0
        var explicitExponent = 0
        var inFraction = false
        var inExponent = false
        var exponentNegative = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "-") where !inExponent: negative = true
            case UInt8(ascii: "-"): exponentNegative = true
            case UInt8(ascii: "+"): break
            case UInt8(ascii: "."): inFraction = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"): inExponent = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let digit = byte &- UInt8(ascii: "0")
                if inExponent {
                    // Saturate: exponents beyond a quadrillion are not told apart.
                    if explicitExponent < 1_000_000_000_000_000 { explicitExponent = explicitExponent * 10 + Int(digit) }
                } else {
                    if inFraction { fractionDigits += 1 }
                    // Leading zeros carry no value; the fraction count still places the digits after them.
                    if !(digits.isEmpty && digit == 0) { digits.append(digit) }
                }
            default: break
            }
        }
        exponent = (exponentNegative ? -explicitExponent : explicitExponent) - fractionDigits
        while let last = digits.last, last == 0 {
            digits.removeLast()
            exponent += 1
        }
        if digits.isEmpty {
            negative = false
            exponent = 0
        }
        self.negative = negative
        self.digits = digits
        self.exponent = exponent
    }
}

/// The JSON number grammar, shared by the parser and `JSONNumber(text:)`.
@usableFromInline
enum JSONNumberSyntax {
    /// Scans a number starting at `start`; returns where it ends and whether it is an integer, or nil if malformed.
    @usableFromInline
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (end: Int, isInteger: Bool)? {
        var index = start
        let count = bytes.count
        if index < count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < count else { return nil }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if bytes[index] >= UInt8(ascii: "1"), bytes[index] <= UInt8(ascii: "9") {
            index += 1
            while index < count, bytes[index] &- UInt8(ascii: "0") < 10 { index += 1 }
        } else {
            return nil
        }
        var isInteger = true
        if index < count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let digitsStart = index
            while index < count, bytes[index] &- UInt8(ascii: "0") < 10 { index += 1 }
            guard index > digitsStart else { return nil }
            isInteger = false
        }
        if index < count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let digitsStart = index
            while index < count, bytes[index] &- UInt8(ascii: "0") < 10 { index += 1 }
            guard index > digitsStart else { return nil }
            isInteger = false
        }
        return (index, isInteger)
    }
}
