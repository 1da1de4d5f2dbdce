/// A validating cursor over JSON bytes that builds nothing: it checks the grammar where it walks,
/// hands out keys and strings as byte ranges, and notes whether the bytes are already in the compact
/// form `JSONWriter` would write (so they can be copied to an output as they are).
///
/// It is the fast path of payload validation (`Payload(viewing:)`), so it is deliberately narrow:
/// whatever it does not handle the usual way it refuses with `Unusual`, and the caller falls back to
/// the tree (`JSONParser`), which decides the record exactly as before and words its errors. Refused:
/// every syntax error, nesting beyond the limit, an escaped object key, a repeated key (the tree
/// keeps the last value, which the rules would have to honour), and objects of more than
/// `maximumKeys` keys (repeated-key detection here is a scan).
///
/// Like the parser it never recurses: nesting lives in `frames`, checked against the depth limit.
///
/// Public, with its small reading methods `@inlinable`, because its callers are in other modules
/// (the payload's rules, the statistics reader) and Swift inlines across modules only public code:
/// as `package` code each read was a call, and a non-mutating one copied the whole scanner.
public struct JSONScanner: ~Copyable {
    /// Why the scanner gave up: the tree parser decides such bytes (and words the error, if any).
    public struct Unusual: Error {
        /// Makes the refusal.
        @inlinable public init() {}
    }

    /// The document.
    public let bytes: UnsafeBufferPointer<UInt8>
    /// The next byte to read.
    @usableFromInline var index = 0
    /// Open containers beyond those the caller opened with `openObject` and `openArray`: the start of
    /// the object's keys in `keys`, or -1 for an array.
    private var frames: ScratchStack<Int>
    /// The keys of the open objects, outermost first.
    private var keys: ScratchStack<Range<Int>>
    /// Containers open now, the caller's and `skipValue`'s; the top level is 1.
    @usableFromInline var depth = 0
    /// The deepest nesting allowed.
    @usableFromInline let maxDepth: Int
    /// Whether keys are checked for repeats (and objects for their number of keys).
    @usableFromInline let checksKeys: Bool
    /// What ``isCompact`` reads; a stored property of its own so that inlined methods can clear it.
    @usableFromInline var compact = true
    /// Where the whitespace outside strings lies, for the writer's compaction (``WhitespaceRuns``).
    @usableFromInline var whitespace: WhitespaceRuns

    /// Whether every byte so far is what `JSONWriter` writes for the same value: no whitespace outside
    /// strings, and only the escapes it writes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00xx`).
    public var isCompact: Bool { compact }

    /// Objects with more keys than this are left to the tree, whose repeated-key check hashes.
    public static let maximumKeys = 32

    /// Prepares to scan `bytes`; the bytes and the lent scratch memory must outlive the scanner.
    @usableFromInline init(
        bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, checksKeys: Bool, frames: UnsafeMutableBufferPointer<Int>,
        keys: UnsafeMutableBufferPointer<Range<Int>>, whitespace: WhitespaceRuns
    ) {
        self.bytes = bytes
        self.whitespace = whitespace
        self.whitespace.start(bytes)
        self.maxDepth = maxDepth
        self.checksKeys = checksKeys
        self.frames = ScratchStack(lending: frames)
        self.keys = ScratchStack(lending: keys)
    }

    /// Runs `body` with a scanner over `bytes`, its scratch memory on the stack; `body` keeps what it
    /// reads in its own variables.
    ///
    /// `checksKeys: false` is for machine-written documents whose objects have many keys (librdkafka's
    /// statistics: one member per partition): repeated keys are then not refused, and neither are
    /// objects of more than `maximumKeys` keys.
    ///
    /// Not generic over a result on purpose: called from another module, a generic one ran
    /// unspecialised, looking up the metadata of its result types at run time on every call, and made
    /// payload validation 16 % slower (`bench validation --mix 300-bytes`: 530,000 records/s/core
    /// against 630,000).
    public static func withScanner(
        over bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, checksKeys: Bool = true,
        _ body: (inout JSONScanner) throws(Unusual) -> Void
    ) throws(Unusual) {
        var whitespace = WhitespaceRuns.none
        try withScanner(over: bytes, maxDepth: maxDepth, checksKeys: checksKeys, recording: &whitespace, body)
    }

    /// ``withScanner(over:maxDepth:checksKeys:_:)`` that also notes where the document's
    /// whitespace lies, into `whitespace` (complete only when `body` scanned the document to its
    /// end with ``finish()`` and did not throw).
    public static func withScanner(
        over bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, checksKeys: Bool = true, recording whitespace: inout WhitespaceRuns,
        _ body: (inout JSONScanner) throws(Unusual) -> Void
    ) throws(Unusual) {
        let failed: Bool = withUnsafeTemporaryAllocation(of: Int.self, capacity: 16) { frames in
            withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: 64) { keys in
                var scanner = JSONScanner(
                    bytes: bytes, maxDepth: maxDepth, checksKeys: checksKeys, frames: frames, keys: keys, whitespace: whitespace)
                do throws(Unusual) {
                    try body(&scanner)
                    whitespace = scanner.whitespace
                    return false
                } catch {
                    whitespace = scanner.whitespace
                    whitespace.discard()
                    return true
                }
            }
        }
        if failed { throw Unusual() }
    }

    // MARK: Reading by the caller

    /// The first byte of the next value, after whitespace; nil at the end.
    @inlinable
    public mutating func peek() -> UInt8? {
        skipWhitespace()
        return index < bytes.count ? bytes[index] : nil
    }

    /// Requires the end of the document (whitespace aside).
    @inlinable
    public mutating func finish() throws(Unusual) {
        skipWhitespace()
        guard index == bytes.count else { throw Unusual() }
        whitespace.finish()
    }

    /// An object opened by the caller, read member by member with `nextKey(_:)`.
    public struct OpenObject {
        /// Where its keys start in `keys`.
        @usableFromInline let keyStart: Int
        /// Whether no member was read yet.
        @usableFromInline var atStart = true

        /// An object whose keys start at `keyStart`, no member read yet.
        @inlinable init(keyStart: Int) { self.keyStart = keyStart }
    }

    /// Opens the object at the cursor.
    @inlinable
    public mutating func openObject() throws(Unusual) -> OpenObject {
        guard peek() == UInt8(ascii: "{"), depth < maxDepth else { throw Unusual() }
        depth += 1
        index += 1
        return OpenObject(keyStart: keyCount)
    }

    /// The next member's key (raw bytes between the quotes, never escaped), leaving the cursor at its
    /// value; nil when the object closed.
    ///
    /// Always inlined: its callers read a payload's members in loops, and once the whitespace
    /// runs moved out of line the compiler stopped inlining it on its own (a call per member,
    /// 300 instructions of a compact request).
    @inlinable @inline(__always)
    public mutating func nextKey(_ object: inout OpenObject) throws(Unusual) -> Range<Int>? {
        skipWhitespace()
        guard index < bytes.count else { throw Unusual() }
        if bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            removeKeys(from: object.keyStart)
            return nil
        }
        if !object.atStart {
            guard bytes[index] == UInt8(ascii: ",") else { throw Unusual() }
            index += 1
            skipWhitespace()
        }
        object.atStart = false
        return try readKey(objectStart: object.keyStart)
    }

    /// An array opened by the caller, read element by element with `nextElement(_:)`.
    public struct OpenArray {
        /// Whether no element was read yet.
        @usableFromInline var atStart = true

        /// An array, no element read yet.
        @inlinable init() {}
    }

    /// Opens the array at the cursor.
    @inlinable
    public mutating func openArray() throws(Unusual) -> OpenArray {
        guard peek() == UInt8(ascii: "["), depth < maxDepth else { throw Unusual() }
        depth += 1
        index += 1
        return OpenArray()
    }

    /// Whether there is another element, leaving the cursor at it; false when the array closed.
    @inlinable
    public mutating func nextElement(_ array: inout OpenArray) throws(Unusual) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw Unusual() }
        if bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return false
        }
        if !array.atStart {
            guard bytes[index] == UInt8(ascii: ",") else { throw Unusual() }
            index += 1
        }
        array.atStart = false
        return true
    }

    /// A string read by `readString()`: the raw bytes between its quotes.
    public struct StringToken {
        /// The raw bytes between the quotes.
        public let range: Range<Int>
        /// Whether it contains an escape (so its raw bytes are not its value).
        public let isEscaped: Bool

        /// The token of the raw bytes `range`.
        @inlinable init(range: Range<Int>, isEscaped: Bool) {
            self.range = range
            self.isEscaped = isEscaped
        }
    }

    /// Reads the string at the cursor.
    @inlinable
    public mutating func readString() throws(Unusual) -> StringToken {
        guard peek() == UInt8(ascii: "\"") else { throw Unusual() }
        return try scanString()
    }

    /// Reads the number at the cursor: its text and whether it is an integer (no fraction or exponent).
    @inlinable
    public mutating func readNumber() throws(Unusual) -> (range: Range<Int>, isInteger: Bool) {
        guard let first = peek(), first == UInt8(ascii: "-") || first &- UInt8(ascii: "0") < 10,
            let shape = JSONNumberSyntax.scan(bytes, from: index)
        else { throw Unusual() }
        let start = index
        index = shape.end
        return (start..<shape.end, shape.isInteger)
    }

    /// The bytes of `range`.
    @inlinable
    public func slice(_ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[range])
    }

    /// The value of a string token as a `String`, escapes decoded.
    public func string(_ token: StringToken) -> String {
        guard token.isEscaped else { return String(decoding: slice(token.range), as: UTF8.self) }
        // Rare: let the parser decode the escapes of the quoted text (which the scan found valid).
        let quoted = UnsafeBufferPointer(rebasing: bytes[(token.range.lowerBound - 1)..<(token.range.upperBound + 1)])
        return (try? JSONValue.parse(quoted, maxDepth: 1).get())?.stringValue ?? ""
    }

    // MARK: Skipping

    /// Checks and steps over the value at the cursor, whatever it is, nested containers included.
    public mutating func skipValue() throws(Unusual) {
        let base = frames.count
        while true {
            // The start of a value.
            guard let byte = peek() else { throw Unusual() }
            switch byte {
            case UInt8(ascii: "{"):
                try enterContainer()
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    depth -= 1
                } else {
                    frames.push(keys.count)
                    _ = try readKey(objectStart: keys.count)
                    continue
                }
            case UInt8(ascii: "["):
                try enterContainer()
                skipWhitespace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    depth -= 1
                } else {
                    frames.push(-1)
                    continue
                }
            case UInt8(ascii: "\""): _ = try scanString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try readNumber()
            case UInt8(ascii: "t"): try expectLiteral("true")
            case UInt8(ascii: "f"): try expectLiteral("false")
            case UInt8(ascii: "n"): try expectLiteral("null")
            default: throw Unusual()
            }
            // After a value: the next member or element, or the end of containers.
            while true {
                guard frames.count > base else { return }
                let keyStart = frames.top
                skipWhitespace()
                guard index < bytes.count else { throw Unusual() }
                let next = bytes[index]
                if next == UInt8(ascii: ",") {
                    index += 1
                    skipWhitespace()
                    if keyStart >= 0 { _ = try readKey(objectStart: keyStart) }
                    break
                }
                guard next == (keyStart >= 0 ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { throw Unusual() }
                if keyStart >= 0 { keys.remove(from: keyStart) }
                index += 1
                depth -= 1
                frames.pop()
            }
        }
    }

    /// How many keys the open objects hold (for inlined callers: the stacks themselves stay private,
    /// as Swift 6.3 crashes inlining a setter of a non-copyable stored property).
    @usableFromInline var keyCount: Int { keys.count }

    /// Forgets the keys of an object that closed.
    @usableFromInline mutating func removeKeys(from start: Int) {
        keys.remove(from: start)
    }

    /// Steps into a container at the cursor, refusing to go beyond the depth limit.
    @usableFromInline mutating func enterContainer() throws(Unusual) {
        guard depth < maxDepth else { throw Unusual() }
        depth += 1
        index += 1
    }

    /// Reads `"key" :`, refusing escaped keys and (when checking keys) repeated keys and too many keys.
    @usableFromInline mutating func readKey(objectStart: Int) throws(Unusual) -> Range<Int> {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Unusual() }
        let key = try scanString()
        guard !key.isEscaped else { throw Unusual() }
        let range = key.range
        if checksKeys {
            guard keys.count - objectStart < Self.maximumKeys else { throw Unusual() }
            for position in objectStart..<keys.count {
                let repeated = keys.withElement(at: position) { earlier in
                    earlier.count == range.count && bytesEqual(at: earlier.lowerBound, and: range.lowerBound, count: range.count)
                }
                if repeated { throw Unusual() }
            }
            keys.push(range)
        }
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw Unusual() }
        index += 1
        return range
    }

    /// Whether the `count` bytes at `first` equal those at `second`, eight at a time (the generic
    /// `elementsEqual` of two slices compared a byte per step, about 1 % of a validation).
    private func bytesEqual(at first: Int, and second: Int, count: Int) -> Bool {
        guard let base = bytes.baseAddress else { return count == 0 }
        let a = UnsafeRawPointer(base + first)
        let b = UnsafeRawPointer(base + second)
        var offset = 0
        while offset + 8 <= count {
            guard a.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == b.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            else { return false }
            offset += 8
        }
        while offset < count {
            guard a.load(fromByteOffset: offset, as: UInt8.self) == b.load(fromByteOffset: offset, as: UInt8.self) else { return false }
            offset += 1
        }
        return true
    }

    // MARK: Tokens

    /// Scans a string starting at its opening quote: UTF-8, control characters and escapes checked.
    @usableFromInline mutating func scanString() throws(Unusual) -> StringToken {
        index += 1
        let start = index
        var isEscaped = false
        while index < bytes.count {
            // Eight bytes at a time to the first that needs a look (the parser's SWAR test).
            index = JSONParser.skipPlainWords(bytes, from: index)
            guard index < bytes.count else { break }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return StringToken(range: start..<(index - 1), isEscaped: isEscaped)
            case UInt8(ascii: "\\"):
                isEscaped = true
                try scanEscape()
            case 0x80...:
                guard let length = UTF8Check.sequenceLength(bytes, at: index) else { throw Unusual() }
                index += length
            case ..<0x20:
                throw Unusual()
            default:
                index += 1
            }
        }
        throw Unusual()
    }

    /// Checks the escape at the cursor (a backslash), noting escapes `JSONWriter` would not write.
    private mutating func scanEscape() throws(Unusual) {
        guard index + 1 < bytes.count else { throw Unusual() }
        let escape = bytes[index + 1]
        index += 2
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
            UInt8(ascii: "r"), UInt8(ascii: "t"):
            return
        case UInt8(ascii: "/"):
            rewritesEscape()
        case UInt8(ascii: "u"):
            let digitsStart = index
            let unit = try readHex4()
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate must be followed by an escaped low one.
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw Unusual() }
                index += 2
                guard (0xDC00...0xDFFF).contains(try readHex4()) else { throw Unusual() }
                rewritesEscape()
            case 0xDC00...0xDFFF:
                throw Unusual()
            default:
                // `JSONWriter` escapes only control characters without a short escape, as lowercase `\u00xx`.
                let hasShortEscape = unit == 0x08 || unit == 0x09 || unit == 0x0A || unit == 0x0C || unit == 0x0D
                if unit >= 0x20 || hasShortEscape || !isLowercaseHex(from: digitsStart) { rewritesEscape() }
            }
        default:
            throw Unusual()
        }
    }

    /// Notes an escape `JSONWriter` writes otherwise: the bytes are not compact, and dropping
    /// their whitespace does not make them so.
    private mutating func rewritesEscape() {
        compact = false
        whitespace.abandon()
    }

    /// Reads four hexadecimal digits.
    private mutating func readHex4() throws(Unusual) -> UInt16 {
        guard index + 4 <= bytes.count, case .value(let value) = JSONSyntax.hex4(bytes, at: index) else { throw Unusual() }
        index += 4
        return value
    }

    /// Whether the four hexadecimal digits at `start` have no upper-case letter.
    private func isLowercaseHex(from start: Int) -> Bool {
        !bytes[start..<(start + 4)].contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") }
    }

    /// Consumes `literal` exactly.
    private mutating func expectLiteral(_ literal: StaticString) throws(Unusual) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw Unusual() }
        let expected = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != expected[offset] { throw Unusual() }
        index += count
    }

    /// Skips JSON whitespace, which `JSONWriter` never writes. Inlined, it reads one byte: a
    /// compact document has none to skip. The run itself is stepped over and noted out of line:
    /// inlined whole at every call site, the scanner's callers grew and a compact payload's
    /// validation cost 6 % more (`bench validation --instructions`: 9,709 against 9,153).
    @inlinable
    mutating func skipWhitespace() {
        guard index < bytes.count, JSONSyntax.isWhitespace(bytes[index]) else { return }
        skipWhitespaceRun()
    }

    /// Steps over the run of whitespace at the cursor, noting where it lies.
    @usableFromInline mutating func skipWhitespaceRun() {
        let start = index
        index += 1
        // Python's spaced JSON has runs of one space; a pretty printer's are a line break and
        // its indentation, spaces taken eight at a time (the first byte that is not a space is
        // the lowest non-zero byte of the word XOR eight spaces).
        if let base = bytes.baseAddress {
            while index + 8 <= bytes.count {
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self).littleEndian ^ 0x2020_2020_2020_2020
                guard word == 0 else {
                    index += word.trailingZeroBitCount >> 3
                    break
                }
                index += 8
            }
        }
        while index < bytes.count, JSONSyntax.isWhitespace(bytes[index]) { index += 1 }
        compact = false
        whitespace.record(start, index)
    }
}
