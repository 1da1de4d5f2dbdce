/// Writes JSON values compactly: no whitespace, UTF-8, `/` not escaped, numbers as written.
///
/// The dispatcher writes its records with it straight into one buffer, field by field. The buffer
/// is its own memory (noncopyable: one owner, freed when the writer goes), written through a
/// pointer: an `Array`'s `append` checked its uniqueness and capacity on each of the some forty
/// pieces of a delivery (4,000 instructions per record under callgrind, docs/performance.md).
/// Public, with its small methods `@inlinable`, rather than `package`: Swift 6.3 inlines no
/// `package` function into another module.
public struct JSONWriter: ~Copyable {
    /// The buffer.
    @usableFromInline var base: UnsafeMutableRawPointer
    /// Bytes written.
    @usableFromInline var written: Int
    /// Bytes the buffer holds.
    @usableFromInline var capacity: Int

    /// Makes a writer with room for `capacity` bytes (it grows as needed).
    @inlinable
    public init(capacity: Int = 1024) {
        self.capacity = Swift.max(capacity, 16)
        base = .allocate(byteCount: self.capacity, alignment: 1)
        written = 0
    }

    deinit {
        base.deallocate()
    }

    /// How many bytes are written.
    @inlinable public var count: Int { written }

    /// The bytes written, copied into an array.
    public var bytes: [UInt8] {
        [UInt8](UnsafeRawBufferPointer(start: base, count: written))
    }

    /// The bytes written, as an array; the writer is gone.
    public consuming func finish() -> [UInt8] {
        bytes
    }

    /// Calls `body` with the bytes written (valid only during the call).
    @inlinable
    public func withUnsafeBytes<Result, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: written))
    }

    /// Empties the writer for the next value, keeping its buffer (the in-place path writes every
    /// record into one).
    @inlinable
    public mutating func reset() {
        written = 0
    }

    /// Room for `count` more bytes; where they go.
    @inlinable @inline(__always)
    mutating func reserve(_ count: Int) -> UnsafeMutableRawPointer {
        if written + count > capacity { grow(toHold: written + count) }
        return base + written
    }

    /// A buffer at least twice as large, or as large as `needed`, with what is written.
    @usableFromInline
    mutating func grow(toHold needed: Int) {
        let larger = Swift.max(capacity * 2, needed)
        let moved = UnsafeMutableRawPointer.allocate(byteCount: larger, alignment: 1)
        moved.copyMemory(from: base, byteCount: written)
        base.deallocate()
        base = moved
        capacity = larger
    }

    /// Lets `body` write at most `limit` bytes at the end; it returns how many it wrote.
    @inlinable
    public mutating func write(upTo limit: Int, _ body: (UnsafeMutableRawBufferPointer) -> Int) {
        let at = reserve(limit)
        written += body(UnsafeMutableRawBufferPointer(start: at, count: limit))
    }

    /// Appends bytes as they are (JSON text, or characters that need no escaping).
    @inlinable @inline(__always)
    public mutating func append(bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count).copyMemory(from: source, byteCount: bytes.count)
        written += bytes.count
    }

    /// Appends one byte.
    @inlinable @inline(__always)
    public mutating func append(byte: UInt8) {
        reserve(1).storeBytes(of: byte, as: UInt8.self)
        written += 1
    }

    /// Appends a value.
    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .number(let number): writeRaw(number.text)
        case .string(let string): write(string: string)
        case .array(let elements):
            append(byte: UInt8(ascii: "["))
            // Index loops borrow the elements in place; `enumerated()` would copy (retain) each one.
            for position in elements.indices {
                if position > 0 { append(byte: UInt8(ascii: ",")) }
                write(elements[position])
            }
            append(byte: UInt8(ascii: "]"))
        case .object(let object): write(object: object)
        }
    }

    /// Appends an object.
    public mutating func write(object: JSONObject) {
        append(byte: UInt8(ascii: "{"))
        let members = object.members
        for position in members.indices {
            if position > 0 { append(byte: UInt8(ascii: ",")) }
            write(string: members[position].key)
            append(byte: UInt8(ascii: ":"))
            write(members[position].value)
        }
        append(byte: UInt8(ascii: "}"))
    }

    /// Appends a quoted, escaped string.
    public mutating func write(string: String) {
        // Read in place: a copy of the string (for `withUTF8`) was a retain and a release per call.
        if let written: Void = string.utf8.withContiguousStorageIfAvailable({ write(stringBytes: $0) }) { return written }
        var copy = string
        copy.withUTF8 { write(stringBytes: $0) }
    }

    /// Appends UTF-8 text in memory (a header value lent in place) as a quoted, escaped string:
    /// the bytes ``write(string:)`` writes for the same text.
    public mutating func write(stringBytes bytes: UnsafeBufferPointer<UInt8>) {
        append(byte: UInt8(ascii: "\""))
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
                append(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[runStart..<escaped])))
                runStart = position
                append(byte: UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): append(byte: byte)
                case 0x08: append(byte: UInt8(ascii: "b"))
                case 0x0C: append(byte: UInt8(ascii: "f"))
                case 0x0A: append(byte: UInt8(ascii: "n"))
                case 0x0D: append(byte: UInt8(ascii: "r"))
                case 0x09: append(byte: UInt8(ascii: "t"))
                default:
                    append("u00")
                    append(byte: Self.hexDigits[Int(byte >> 4)])
                    append(byte: Self.hexDigits[Int(byte & 0x0F)])
                }
            }
            append(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count])))
        }
        append(byte: UInt8(ascii: "\""))
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
        if let written: Void = text.utf8.withContiguousStorageIfAvailable({ append(bytes: UnsafeRawBufferPointer($0)) }) {
            return written
        }
        var copy = text
        copy.withUTF8 { append(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Appends JSON text as it is (a literal, or punctuation and keys that need no escaping).
    /// Always inlined: the literal's length is then a constant, and the copy a few moves rather
    /// than a call to `memcpy` (some forty of them a delivery).
    @inlinable @inline(__always)
    public mutating func append(_ literal: StaticString) {
        append(bytes: UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends JSON text that is already compact, as it is.
    @inlinable
    public mutating func append(json bytes: [UInt8]) {
        bytes.withUnsafeBytes { append(bytes: $0) }
    }

    /// Appends JSON text that is already compact, in memory (a consumed record's value, lent by its view).
    @inlinable
    public mutating func append(json bytes: UnsafeBufferPointer<UInt8>) {
        append(bytes: UnsafeRawBufferPointer(bytes))
    }

    /// Appends an integer in decimal, as `JSONNumber(_:)` spells it.
    public mutating func write(integer: Int) {
        // At most 20 characters: a sign and 19 digits. Written backwards, then in place.
        write(upTo: 20) { room in
            var magnitude = integer.magnitude
            var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
            return withUnsafeMutableBytes(of: &digits) { scratch in
                var position = scratch.count
                repeat {
                    position -= 1
                    scratch[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                    magnitude /= 10
                } while magnitude > 0
                if integer < 0 {
                    position -= 1
                    scratch[position] = UInt8(ascii: "-")
                }
                let length = scratch.count - position
                room.copyMemory(from: UnsafeRawBufferPointer(rebasing: scratch[position...]))
                return length
            }
        }
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
        return writer.finish()
    }

    /// The value as compact JSON text.
    public var compactText: String {
        String(decoding: serialized(), as: UTF8.self)
    }
}
