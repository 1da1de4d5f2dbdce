/// A byte-level JSON parser that keeps numbers as written and never recurses.
///
/// Nesting lives in an explicit stack whose height is checked against the depth limit before each
/// push, so ten thousand `[` fail at the limit (512) at once, with no risk to the thread's stack.
/// Invalid UTF-8, lone surrogates, control characters in strings and trailing data are errors.
struct JSONParser: ~Copyable {
    /// The document.
    private let bytes: UnsafeBufferPointer<UInt8>
    /// The next byte to read.
    private var index = 0
    /// The deepest nesting allowed; the top-level container is level 1.
    private let maxDepth: Int
    /// Open containers, innermost last.
    private var stack: [Frame] = []

    /// Prepares to parse `bytes`, which must stay valid while the parser runs.
    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// Parses one JSON value surrounded by optional whitespace, and nothing else.
    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected data after the JSON value") }
        return value
    }

    /// An open array or object on the stack.
    private struct Frame {
        var isObject: Bool
        var elements: [JSONValue] = []
        var members: [JSONObject.Member] = []
        /// The key whose value is being parsed (objects only).
        var pendingKey = ""
        /// Positions of keys, built only once an object grows large, to keep duplicate checks linear.
        var keyIndex: [JSONValue.ExactString: Int]? = nil
    }

    /// Objects larger than this get a key index for duplicate detection.
    private static let indexThreshold = 24

    /// Parses a value, descending into containers with the explicit stack.
    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        let baseDepth = stack.count
        while true {
            // Read the start of a value.
            guard index < bytes.count else { throw failure("unexpected end of data, expected a value") }
            var value: JSONValue
            switch bytes[index] {
            case UInt8(ascii: "{"):
                try openContainer()
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    value = .object(JSONObject())
                } else {
                    stack.append(Frame(isObject: true))
                    stack[stack.count - 1].pendingKey = try parseKey()
                    continue
                }
            case UInt8(ascii: "["):
                try openContainer()
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    value = .array([])
                } else {
                    stack.append(Frame(isObject: false))
                    continue
                }
            case UInt8(ascii: "\""):
                value = .string(try parseString())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = .number(try parseNumber())
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            default:
                throw failure("unexpected character \(describe(bytes[index])), expected a value")
            }
            // Hand the value to its container, closing containers as they end.
            while true {
                guard stack.count > baseDepth else { return value }
                let top = stack.count - 1
                skipWhitespace()
                guard index < bytes.count else { throw failure("unexpected end of data inside a container") }
                let byte = bytes[index]
                if stack[top].isObject {
                    insert(value, intoFrameAt: top)
                    if byte == UInt8(ascii: ",") {
                        index += 1
                        skipWhitespace()
                        stack[top].pendingKey = try parseKey()
                        break
                    }
                    guard byte == UInt8(ascii: "}") else { throw failure("expected ',' or '}' in an object") }
                    index += 1
                    value = .object(JSONObject(uniqueMembers: stack.removeLast().members))
                } else {
                    stack[top].elements.append(value)
                    if byte == UInt8(ascii: ",") {
                        index += 1
                        skipWhitespace()
                        break
                    }
                    guard byte == UInt8(ascii: "]") else { throw failure("expected ',' or ']' in an array") }
                    index += 1
                    value = .array(stack.removeLast().elements)
                }
            }
        }
    }

    /// Refuses to open a container beyond the depth limit.
    private func openContainer() throws(JSONParseError) {
        guard stack.count < maxDepth else {
            throw failure("nesting deeper than \(maxDepth) levels")
        }
    }

    /// Adds the pending key's value to an object; a repeated key keeps its first position and takes the last value.
    private mutating func insert(_ value: JSONValue, intoFrameAt top: Int) {
        let key = stack[top].pendingKey
        if stack[top].keyIndex != nil {
            let exact = JSONValue.ExactString(key)
            if let existing = stack[top].keyIndex?[exact] {
                stack[top].members[existing].value = value
            } else {
                let position = stack[top].members.count
                stack[top].keyIndex?[exact] = position
                stack[top].members.append(JSONObject.Member(key: key, value: value))
            }
            return
        }
        if let existing = stack[top].members.firstIndex(where: { JSONObject.sameKey($0.key, key) }) {
            stack[top].members[existing].value = value
            return
        }
        stack[top].members.append(JSONObject.Member(key: key, value: value))
        if stack[top].members.count > Self.indexThreshold {
            var keyIndex: [JSONValue.ExactString: Int] = [:]
            for (position, member) in stack[top].members.enumerated() {
                keyIndex[JSONValue.ExactString(member.key)] = position
            }
            stack[top].keyIndex = keyIndex
        }
    }

    /// Parses `"key" :` and leaves the index at the value.
    private mutating func parseKey() throws(JSONParseError) -> String {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
            throw failure(index < bytes.count ? "expected a string key in an object" : "unexpected end of data, expected a key")
        }
        let key = try parseString()
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':' after an object key") }
        index += 1
        skipWhitespace()
        return key
    }

    /// Parses a string starting at its opening quote.
    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1
        let start = index
        var asciiOnly = true
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if asciiOnly { return String(decoding: slice, as: UTF8.self) }
                guard let string = String(validating: slice, as: UTF8.self) else {
                    throw JSONParseError(offset: start, message: "invalid UTF-8 in a string")
                }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("control character \(describe(byte)) in a string") }
            if byte >= 0x80 { asciiOnly = false }
            index += 1
        }
        guard index < bytes.count else { throw JSONParseError(offset: start - 1, message: "unterminated string") }
        return try parseEscapedString(from: start)
    }

    /// The slow path for strings with escapes: decodes into a buffer, then validates it as UTF-8.
    private mutating func parseEscapedString(from start: Int) throws(JSONParseError) -> String {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(index - start + 16)
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: buffer, as: UTF8.self) else {
                    throw JSONParseError(offset: start, message: "invalid UTF-8 in a string")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escape)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(to: &buffer)
                default:
                    index -= 1
                    throw failure("invalid escape \\\(describe(escape)) in a string")
                }
            default:
                if byte < 0x20 { throw failure("control character \(describe(byte)) in a string") }
                buffer.append(byte)
                index += 1
            }
        }
        throw JSONParseError(offset: start - 1, message: "unterminated string")
    }

    /// Decodes `XXXX` after `\u`, joining a surrogate pair; a lone surrogate is an error.
    private mutating func appendUnicodeEscape(to buffer: inout [UInt8]) throws(JSONParseError) {
        let escapeStart = index - 2
        let high = try readHex4()
        var scalarValue = UInt32(high)
        if (0xD800...0xDBFF).contains(high) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw JSONParseError(offset: escapeStart, message: "lone surrogate \\u\(hex(high)) in a string")
            }
            index += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else {
                throw JSONParseError(offset: escapeStart, message: "lone surrogate \\u\(hex(high)) in a string")
            }
            scalarValue = 0x10000 + ((UInt32(high) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(high) {
            throw JSONParseError(offset: escapeStart, message: "lone surrogate \\u\(hex(high)) in a string")
        }
        guard let scalar = Unicode.Scalar(scalarValue) else {
            throw JSONParseError(offset: escapeStart, message: "invalid \\u escape in a string")
        }
        guard let encoded = UTF8.encode(scalar) else {
            throw JSONParseError(offset: escapeStart, message: "invalid \\u escape in a string")
        }
        buffer.append(contentsOf: encoded)
    }

    /// Reads four hexadecimal digits.
    private mutating func readHex4() throws(JSONParseError) -> UInt16 {
        guard index + 4 <= bytes.count else { throw failure("incomplete \\u escape in a string") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid hexadecimal digit \(describe(byte)) in a \\u escape")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// Parses a number, keeping its text.
    private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        guard let shape = JSONNumberSyntax.scan(bytes, from: index) else { throw failure("malformed number") }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<shape.end]), as: UTF8.self)
        index = shape.end
        return JSONNumber(checkedText: text, isInteger: shape.isInteger)
    }

    /// Consumes `literal` exactly.
    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        let expected = literal.utf8Start
        guard index + count <= bytes.count else { throw failure("invalid literal, expected \(literal)") }
        for offset in 0..<count where bytes[index + offset] != expected[offset] {
            throw failure("invalid literal, expected \(literal)")
        }
        index += count
    }

    /// Skips JSON whitespace.
    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// An error at the current byte.
    private func failure(_ message: String) -> JSONParseError {
        JSONParseError(offset: index, message: message)
    }

    /// A byte shown for a person: the character when printable ASCII, else its hexadecimal code.
    private func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x\(hex(UInt16(byte), width: 2))"
    }

    /// Hexadecimal digits, upper case, zero-padded.
    private func hex(_ value: UInt16, width: Int = 4) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

extension JSONValue {
    /// Parses a JSON document: one value, optional whitespace around it, nothing else.
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 JSON text.
    ///   - maxDepth: The deepest nesting of arrays and objects allowed (the top-level container is 1).
    /// - Throws: `JSONParseError` naming the offset and the problem.
    public init(parsing bytes: some Collection<UInt8>, maxDepth: Int = JSONValue.maximumDepth) throws(JSONParseError) {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            JSONValue.parse(buffer, maxDepth: maxDepth)
        } ?? Array(bytes).withUnsafeBufferPointer { JSONValue.parse($0, maxDepth: maxDepth) }
        self = try result.get()
    }

    /// Parses contiguous bytes.
    static func parse(_ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) -> Result<JSONValue, JSONParseError> {
        var parser = JSONParser(bytes: buffer, maxDepth: maxDepth)
        do throws(JSONParseError) {
            return .success(try parser.parseDocument())
        } catch {
            return .failure(error)
        }
    }
}
