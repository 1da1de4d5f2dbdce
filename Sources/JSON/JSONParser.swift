import CJSONScan

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
    private var frames: ScratchStack<Frame>
    /// Values of the open containers, outermost first; a container moves its own off the top when it closes.
    private var values: ScratchStack<JSONValue>
    /// Keys of the open objects, outermost first, in step with their values.
    private var keys: ScratchStack<String>
    /// The caller's table of expected keys, handed out instead of a new `String` per key (see
    /// `JSONValue.KnownKeys`); nil when the caller has none.
    private let knownKeys: JSONValue.KnownKeys?
    /// Whether an object keeps every member of a repeated key, in order, instead of the last value
    /// (for documents where a repeat means something, as the headers of a JSON-lines record).
    private let keepsRepeatedKeys: Bool

    /// Prepares to parse `bytes`; the bytes and the lent scratch memory must outlive the parser.
    init(
        bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, frames: UnsafeMutableBufferPointer<Frame>,
        values: UnsafeMutableBufferPointer<JSONValue>, keys: UnsafeMutableBufferPointer<String>,
        knownKeys: JSONValue.KnownKeys? = nil, keepsRepeatedKeys: Bool = false
    ) {
        self.bytes = bytes
        self.knownKeys = knownKeys
        self.keepsRepeatedKeys = keepsRepeatedKeys
        self.maxDepth = maxDepth
        self.frames = ScratchStack(lending: frames)
        self.values = ScratchStack(lending: values)
        self.keys = ScratchStack(lending: keys)
    }

    /// Parses one JSON value surrounded by optional whitespace, and nothing else.
    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected data after the JSON value") }
        return value
    }

    /// An open array or object: where its values (and keys) start on the shared scratch stacks.
    ///
    /// Sharing two scratch stacks instead of one growing array per open container means each
    /// container is allocated once, at its exact size, when it closes.
    struct Frame {
        var isObject: Bool
        var valueStart: Int
        var keyStart: Int
    }

    /// Objects larger than this detect repeated keys with a hash table instead of a scan.
    private static let indexThreshold = 24

    /// Parses a value, descending into containers with the explicit stack.
    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
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
                    frames.push(Frame(isObject: true, valueStart: values.count, keyStart: keys.count))
                    keys.push(try parseKey())
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
                    frames.push(Frame(isObject: false, valueStart: values.count, keyStart: keys.count))
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
                guard frames.count > 0 else { return value }
                let frame = frames.top
                values.push(consume value)
                skipWhitespace()
                guard index < bytes.count else { throw failure("unexpected end of data inside a container") }
                let byte = bytes[index]
                if byte == UInt8(ascii: ",") {
                    index += 1
                    skipWhitespace()
                    if frame.isObject { keys.push(try parseKey()) }
                    break
                }
                if frame.isObject {
                    guard byte == UInt8(ascii: "}") else { throw failure("expected ',' or '}' in an object") }
                    value = .object(closeObject(frame))
                } else {
                    guard byte == UInt8(ascii: "]") else { throw failure("expected ',' or ']' in an array") }
                    value = .array(values.popArray(from: frame.valueStart))
                }
                index += 1
                frames.pop()
            }
        }
    }

    /// Refuses to open a container beyond the depth limit.
    private func openContainer() throws(JSONParseError) {
        guard frames.count < maxDepth else {
            throw failure("nesting deeper than \(maxDepth) levels")
        }
    }

    /// Builds the object of `frame` from the scratch stacks; a repeated key keeps its first position
    /// and takes the last value.
    private mutating func closeObject(_ frame: Frame) -> JSONObject {
        let count = values.count - frame.valueStart
        guard keepsRepeatedKeys || !hasRepeatedKey(from: frame.keyStart) else { return closeObjectWithRepeatedKeys(frame) }
        // The usual case: move keys and values straight into the members.
        var members: [JSONObject.Member] = []
        members.reserveCapacity(count)
        for offset in 0..<count {
            members.append(JSONObject.Member(key: keys.move(at: frame.keyStart + offset), value: values.move(at: frame.valueStart + offset)))
        }
        keys.forget(from: frame.keyStart)
        values.forget(from: frame.valueStart)
        return JSONObject(uniqueMembers: members)
    }

    /// Whether a key from `start` up appears twice: a scan for small objects, a hash set for large ones.
    private func hasRepeatedKey(from start: Int) -> Bool {
        let count = keys.count - start
        if count <= Self.indexThreshold {
            for later in (start + 1)..<max(start + 1, keys.count) {
                let repeated = keys.withElement(at: later) { key in
                    for earlier in start..<later where keys.withElement(at: earlier, { JSONObject.sameKey($0, key) }) {
                        return true
                    }
                    return false
                }
                if repeated { return true }
            }
            return false
        }
        var seen = Set<JSONValue.ExactString>(minimumCapacity: count)
        for position in start..<keys.count {
            let fresh = keys.withElement(at: position) { seen.insert(JSONValue.ExactString(copy $0)).inserted }
            if !fresh { return true }
        }
        return false
    }

    /// The rare case of repeated keys: the first position wins, the last value wins.
    private mutating func closeObjectWithRepeatedKeys(_ frame: Frame) -> JSONObject {
        var object = JSONObject()
        for offset in 0..<(values.count - frame.valueStart) {
            object[keys.move(at: frame.keyStart + offset)] = values.move(at: frame.valueStart + offset)
        }
        keys.forget(from: frame.keyStart)
        values.forget(from: frame.valueStart)
        return object
    }

    /// Parses `"key" :` and leaves the index at the value.
    private mutating func parseKey() throws(JSONParseError) -> String {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
            throw failure(index < bytes.count ? "expected a string key in an object" : "unexpected end of data, expected a key")
        }
        let key = try parseString(matchingKnownKeys: true)
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':' after an object key") }
        index += 1
        skipWhitespace()
        return key
    }

    /// Parses a string starting at its opening quote; for keys, the caller's known keys come from its
    /// table instead of being built anew.
    private mutating func parseString(matchingKnownKeys: Bool = false) throws(JSONParseError) -> String {
        index += 1
        let start = index
        // Fast path: no escapes. Eight bytes at a time while none needs a look.
        while index < bytes.count {
            index = Self.skipPlainWords(bytes, from: index)
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                // Every multi-byte sequence was checked on the way: decoding repairs nothing.
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if matchingKnownKeys, let knownKeys, let known = knownKeys(slice) { return known }
                return String(decoding: slice, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("control character \(describe(byte)) in a string") }
            if byte >= 0x80 {
                guard let length = UTF8Check.sequenceLength(bytes, at: index) else { throw failure("invalid UTF-8 in a string") }
                index += length
            } else {
                index += 1
            }
        }
        guard index < bytes.count else { throw JSONParseError(offset: start - 1, message: "unterminated string") }
        return try parseEscapedString(from: start)
    }

    /// The top bit of each of eight bytes (read little-endian) that is a quote, a backslash, a control
    /// character or not ASCII; zero when none is.
    ///
    /// Classic SWAR: a byte `b` is below 0x20 when `b - 0x20` borrows into its top bit; it equals `c`
    /// when `b ^ c` is zero. A borrow can mark a byte after a true hit, never before one, so the lowest
    /// bit set is the first byte that needs a look: strings jump to it instead of stepping to it.
    @inline(__always)
    static func attentionMask(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let control = word &- ones &* 0x20
        let zeroQuote = quote &- ones
        let zeroBackslash = backslash &- ones
        return ((control | zeroQuote & ~quote | zeroBackslash & ~backslash) & ~word | word) & highs
    }

    /// Where a string's walk from `start` must look at a byte: the first quote, backslash, control
    /// character or non-ASCII byte, found sixteen bytes at a time (SSE2 or NEON, `CJSONScan`), then
    /// eight; or, when fewer than eight bytes are left, the first of those, which the caller then
    /// reads one by one.
    @inline(__always)
    static func skipPlainWords(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return start }
        var index = json_scan_skip_plain16(base, start, bytes.count)
        if index + 16 <= bytes.count { return index }
        while index + 8 <= bytes.count {
            let mask = attentionMask(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            if mask != 0 { return index + mask.trailingZeroBitCount >> 3 }
            index += 8
        }
        return index
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
                // Raw sequences were checked as they were copied and escapes encode valid scalars.
                return String(decoding: buffer, as: UTF8.self)
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
            case 0x80...:
                guard let length = UTF8Check.sequenceLength(bytes, at: index) else { throw failure("invalid UTF-8 in a string") }
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<(index + length)]))
                index += length
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
        switch JSONSyntax.hex4(bytes, at: index) {
        case .value(let value):
            index += 4
            return value
        case .invalidDigit(let position):
            throw failure("invalid hexadecimal digit \(describe(bytes[position])) in a \\u escape", at: position)
        }
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

    /// An error at the current byte, or at `offset`.
    private func failure(_ message: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(offset: offset ?? index, message: message)
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

    /// Parses a JSON document held in an array: the common case, without the generic detour.
    ///
    /// - Throws: `JSONParseError` naming the offset and the problem.
    public init(parsing bytes: [UInt8], maxDepth: Int = JSONValue.maximumDepth) throws(JSONParseError) {
        self = try bytes.withUnsafeBufferPointer { JSONValue.parse($0, maxDepth: maxDepth) }.get()
    }

    /// The string for a key spelled by the given bytes (valid UTF-8, no escapes), when the caller
    /// expects it; nil for any other key, which is then built as usual.
    ///
    /// A document type with a fixed vocabulary (the APNs payload) passes its table so that parsing
    /// hands out one constant string per known key instead of building each anew.
    package typealias KnownKeys = @Sendable (UnsafeBufferPointer<UInt8>) -> String?

    /// Parses a JSON document in memory (a consumed record's value, lent by its view), taking the
    /// keys `knownKeys` knows from its table. Not generic: `package` generic code is not
    /// specialised in other modules.
    ///
    /// - Throws: `JSONParseError` naming the offset and the problem.
    package init(
        parsing buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONValue.maximumDepth, knownKeys: @escaping KnownKeys
    ) throws(JSONParseError) {
        self = try JSONValue.parse(buffer, maxDepth: maxDepth, knownKeys: knownKeys).get()
    }

    /// Parses a JSON document whose objects keep every member of a repeated key, in order (a
    /// `JSONObject` that is not unique: read it with `members`; its subscript finds the first).
    ///
    /// - Throws: `JSONParseError` naming the offset and the problem.
    package init(parsingKeepingRepeatedKeys bytes: [UInt8], maxDepth: Int = JSONValue.maximumDepth) throws(JSONParseError) {
        self = try bytes.withUnsafeBufferPointer { JSONValue.parse($0, maxDepth: maxDepth, keepsRepeatedKeys: true) }.get()
    }

    /// Parses a JSON document in memory, keeping every member of a repeated key.
    ///
    /// - Throws: `JSONParseError` naming the offset and the problem.
    package init(parsingKeepingRepeatedKeys buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONValue.maximumDepth) throws(JSONParseError) {
        self = try JSONValue.parse(buffer, maxDepth: maxDepth, keepsRepeatedKeys: true).get()
    }

    /// Parses contiguous bytes.
    static func parse(
        _ buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int, knownKeys: KnownKeys? = nil, keepsRepeatedKeys: Bool = false
    ) -> Result<JSONValue, JSONParseError> {
        // Scratch space on the stack for typical documents; deeper or wider ones grow onto the heap.
        withUnsafeTemporaryAllocation(of: JSONParser.Frame.self, capacity: 16) { frames in
            withUnsafeTemporaryAllocation(of: JSONValue.self, capacity: 32) { values in
                withUnsafeTemporaryAllocation(of: String.self, capacity: 32) { keys in
                    var parser = JSONParser(
                        bytes: buffer, maxDepth: maxDepth, frames: frames, values: values, keys: keys, knownKeys: knownKeys,
                        keepsRepeatedKeys: keepsRepeatedKeys
                    )
                    do throws(JSONParseError) {
                        return .success(try parser.parseDocument())
                    } catch {
                        return .failure(error)
                    }
                }
            }
        }
    }
}

/// Small pieces of JSON's grammar that the parser and the scanner share.
@usableFromInline enum JSONSyntax {
    /// Whether `byte` is JSON whitespace (space, line feed, carriage return, tab).
    @inlinable static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// Four hexadecimal digits, or where the first byte that is not one is.
    enum Hex4 {
        case value(UInt16)
        case invalidDigit(at: Int)
    }

    /// Reads the four hexadecimal digits at `start` (the caller checked there are four bytes).
    static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Hex4 {
        var value: UInt16 = 0
        for position in start..<(start + 4) {
            guard let digit = hexDigit(bytes[position]) else { return .invalidDigit(at: position) }
            value = value << 4 | UInt16(digit)
        }
        return .value(value)
    }

    /// The value of a hexadecimal digit (either case), nil for any other byte.
    static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
