/// Writes JSON values compactly: no whitespace, UTF-8, `/` not escaped, numbers as written.
///
/// The dispatcher writes its records with it straight into one buffer, field by field. Public,
/// with its small methods `@inlinable`, rather than `package`: Swift 6.3 inlines no `package`
/// function into another module, and a record's writer makes some forty such calls.
public struct JSONWriter {
    /// The bytes written so far.
    public var output: [UInt8] = []

    /// Makes a writer with room for `capacity` bytes.
    @inlinable
    public init(capacity: Int = 1024) { output.reserveCapacity(capacity) }

    /// Appends a value.
    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .number(let number): writeRaw(number.text)
        case .string(let string): write(string: string)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            // Index loops borrow the elements in place; `enumerated()` would copy (retain) each one.
            for position in elements.indices {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                write(elements[position])
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object): write(object: object)
        }
    }

    /// Appends an object.
    public mutating func write(object: JSONObject) {
        output.append(UInt8(ascii: "{"))
        let members = object.members
        for position in members.indices {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            write(string: members[position].key)
            output.append(UInt8(ascii: ":"))
            write(members[position].value)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Appends a quoted, escaped string.
    public mutating func write(string: String) {
        var string = string
        // Native strings lend their bytes in place; only bridged or small ones are copied first.
        string.withUTF8 { write(stringBytes: $0) }
    }

    /// Appends UTF-8 text in memory (a header value lent in place) as a quoted, escaped string:
    /// the bytes ``write(string:)`` writes for the same text.
    public mutating func write(stringBytes bytes: UnsafeBufferPointer<UInt8>) {
        output.append(UInt8(ascii: "\""))
        do {
            var runStart = 0
            var position = 0
            while position < bytes.count {
                // Eight bytes at a time while none needs escaping.
                if position + 8 <= bytes.count, let base = bytes.baseAddress,
                    !Self.needsEscape(UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
                {
                    position += 8
                    continue
                }
                let byte = bytes[position]
                position += 1
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                let escaped = position - 1
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<escaped]))
                runStart = position
                output.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
                case 0x08: output.append(UInt8(ascii: "b"))
                case 0x0C: output.append(UInt8(ascii: "f"))
                case 0x0A: output.append(UInt8(ascii: "n"))
                case 0x0D: output.append(UInt8(ascii: "r"))
                case 0x09: output.append(UInt8(ascii: "t"))
                default:
                    output.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                    output.append(Self.hexDigits[Int(byte >> 4)])
                    output.append(Self.hexDigits[Int(byte & 0x0F)])
                }
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Empties the writer for the next value, keeping its buffer (the in-place path writes every
    /// record into one).
    @inlinable
    public mutating func reset() {
        output.removeAll(keepingCapacity: true)
    }

    /// Whether any of eight bytes is a quote, a backslash or a control character (bytes of multi-byte
    /// characters pass as they are). The same borrow tricks as the parser's scan; false positives only
    /// follow a true hit, which the byte loop then handles.
    @inline(__always)
    private static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let control = word &- ones &* 0x20
        let zeroQuote = (quote &- ones) & ~quote
        let zeroBackslash = (backslash &- ones) & ~backslash
        return (control | zeroQuote | zeroBackslash) & ~word & highs != 0
    }

    /// Appends text as it is.
    private mutating func writeRaw(_ text: String) {
        output.append(contentsOf: text.utf8)
    }

    /// Appends JSON text as it is (a literal, or punctuation and keys that need no escaping).
    @inlinable
    public mutating func append(_ literal: StaticString) {
        output.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends JSON text that is already compact, as it is.
    @inlinable
    public mutating func append(json bytes: [UInt8]) {
        output.append(contentsOf: bytes)
    }

    /// Appends JSON text that is already compact, in memory (a consumed record's value, lent by its view).
    @inlinable
    public mutating func append(json bytes: UnsafeBufferPointer<UInt8>) {
        output.append(contentsOf: bytes)
    }

    /// Appends an integer in decimal, as `JSONNumber(_:)` spells it.
    public mutating func write(integer: Int) {
        writeRaw(String(integer))
    }

    /// Appends a quoted string, or `null` when there is none.
    @inlinable
    public mutating func write(stringOrNull string: String?) {
        if let string { write(string: string) } else { append("null") }
    }

    /// Lower-case hexadecimal digits for `\u00XX`.
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

extension JSONValue {
    /// The value as compact JSON bytes: no whitespace, UTF-8, `/` not escaped, numbers as written.
    public func serialized() -> [UInt8] {
        var writer = JSONWriter()
        writer.write(self)
        return writer.output
    }

    /// The value as compact JSON text.
    public var compactText: String {
        String(decoding: serialized(), as: UTF8.self)
    }
}
