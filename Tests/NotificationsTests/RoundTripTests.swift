import JSON
import Notifications
import Testing
import TestSupport

/// Generates JSON text together with the value it must parse to, in many spellings.
struct JSONTextGenerator {
    var random: SeededGenerator

    /// Characters chosen to exercise escapes, multi-byte UTF-8 and surrogate pairs.
    static let scalars: [Unicode.Scalar] = [
        "a", "Z", "0", " ", "\"", "\\", "/", "\u{0}", "\u{1}", "\u{8}", "\u{9}", "\u{A}", "\u{C}", "\u{D}", "\u{1F}", "\u{7F}",
        "é", "ß", "中", "\u{2028}", "\u{FEFF}", "\u{FFFD}", "😀", "𝄞", "\u{10FFFF}", "\u{E000}",
    ]

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

    mutating func whitespace() -> String {
        int(0...5) == 0 ? [" ", "\n", "\t", "\r\n ", "  "][int(0...4)] : ""
    }

    /// A number's text in one of many spellings.
    mutating func numberText() -> String {
        let sign = int(0...2) == 0 ? "-" : ""
        switch int(0...6) {
        case 0: return sign + String(int(0...1000))
        case 1: return sign + "1" + String((0..<int(19...40)).map { _ in Character(String(int(0...9))) })
        case 2: return sign + String(int(0...99)) + "." + String(int(0...999)) + String(repeating: "0", count: int(0...3))
        case 3: return sign + String(int(1...9)) + ["e", "E"][int(0...1)] + ["", "+", "-"][int(0...2)] + String(int(0...400))
        case 4: return sign + "0." + String(repeating: "0", count: int(0...20)) + String(int(1...999)) + "e-" + String(int(1...30))
        case 5: return sign + "0"
        default: return sign + String(Int.random(in: Int.min / 2...Int.max / 2, using: &random).magnitude)
        }
    }

    /// A string and its JSON text, each scalar written raw or escaped.
    mutating func string() -> (String, String) {
        var value = ""
        var text = "\""
        for _ in 0..<int(0...12) {
            let scalar = Self.scalars[int(0...Self.scalars.count - 1)]
            value.unicodeScalars.append(scalar)
            text += spell(scalar)
        }
        return (value, text + "\"")
    }

    private mutating func spell(_ scalar: Unicode.Scalar) -> String {
        let short: [Unicode.Scalar: String] = ["\"": "\\\"", "\\": "\\\\", "\u{8}": "\\b", "\u{C}": "\\f", "\u{A}": "\\n", "\u{D}": "\\r", "\u{9}": "\\t"]
        if let escape = short[scalar], scalar.value < 0x20 || int(0...1) == 0 || scalar == "\"" || scalar == "\\" {
            return escape
        }
        if scalar == "/", int(0...1) == 0 { return "\\/" }
        if scalar.value < 0x20 || int(0...3) == 0 { return unicodeEscape(scalar) }
        return String(scalar)
    }

    private mutating func unicodeEscape(_ scalar: Unicode.Scalar) -> String {
        func hex(_ unit: UInt32) -> String {
            let digits = String(unit, radix: 16, uppercase: Bool.random())
            return "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
        }
        if scalar.value < 0x10000 { return hex(scalar.value) }
        let offset = scalar.value - 0x10000
        return hex(0xD800 + (offset >> 10)) + hex(0xDC00 + (offset & 0x3FF))
    }

    /// A value up to `depth` levels deep, with its text.
    mutating func value(depth: Int) -> (JSONValue, String) {
        let kind = depth <= 0 ? int(0...4) : int(0...7)
        switch kind {
        case 0: return (nil, "null")
        case 1: let flag = int(0...1) == 0; return (.bool(flag), flag ? "true" : "false")
        case 2, 3:
            let text = numberText()
            // A spelling the type refuses becomes a value the parsed text can never equal, failing the test.
            return (.number(JSONNumber(text: text) ?? JSONNumber(-424_242)), text)
        case 4: let (string, text) = string(); return (.string(string), text)
        case 5:
            var elements: [JSONValue] = []
            var parts: [String] = []
            for _ in 0..<int(0...5) {
                let (element, text) = value(depth: depth - 1)
                elements.append(element)
                parts.append(whitespace() + text + whitespace())
            }
            return (.array(elements), "[" + whitespace() + parts.joined(separator: ",") + "]")
        default:
            var object = JSONObject()
            var parts: [String] = []
            for index in 0..<int(0...5) {
                var (key, keyText) = string()
                key += "#\(index)"
                keyText.removeLast()
                keyText += "#\(index)\""
                let (member, text) = value(depth: depth - 1)
                object[key] = member
                parts.append(whitespace() + keyText + whitespace() + ":" + whitespace() + text + whitespace())
            }
            return (.object(object), "{" + whitespace() + parts.joined(separator: ",") + "}")
        }
    }
}

/// The number texts of a value in document order.
func numberTexts(_ value: JSONValue) -> [String] {
    switch value {
    case .number(let number): [number.text]
    case .array(let elements): elements.flatMap(numberTexts)
    case .object(let object): object.flatMap { numberTexts($0.value) }
    default: []
    }
}

@Suite("Round trip")
struct RoundTripTests {
    @Test("parse → serialise → parse equals the input as JSON, and numbers keep their spelling", arguments: [UInt64(1), 2, 3, 4])
    func roundTrip(seed: UInt64) throws {
        var generator = JSONTextGenerator(random: SeededGenerator(seed: seed))
        for _ in 0..<1_500 {
            let (custom, customText) = generator.value(depth: 5)
            let (aps, apsText) = generator.value(depth: 2)
            let expected: JSONValue = ["aps": ["badge": 1, "x": aps], "data": custom]
            let text = #"{"aps":{"badge":1,"x":"# + apsText + #"},"data":"# + customText + "}"
            let parsed = try JSONValue(parsing: Array(text.utf8))
            #expect(parsed == expected, "\(text)")
            let payload = try Payload(validating: parsed)
            let bytes = payload.serialized()
            let reparsed = try JSONValue(parsing: bytes)
            #expect(reparsed == expected)
            #expect(numberTexts(reparsed) == numberTexts(expected))
            #expect(reparsed.serialized() == bytes)
        }
    }
}
