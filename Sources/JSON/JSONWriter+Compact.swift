import CJSONScan

extension JSONWriter {
    /// Appends valid JSON text as the writer writes its value: the bytes
    /// `JSONValue(parsing: bytes).serialized()` gives, without building the tree.
    ///
    /// Whitespace outside strings goes; strings keep their characters and get the writer's
    /// escapes (`\/` becomes `/`, `\u00e9` becomes `é`, a surrogate pair its four UTF-8 bytes,
    /// `\u001F` becomes `\u001f`, `\u000a` becomes `\n`); numbers and literals are copied as
    /// written; an object's repeated key keeps its first position and its last value. This is
    /// how a delivery carries the payload a provider wrote in any style (Python's spaced
    /// `json.dumps`, a pretty printer's lines, Java's compact form) in the one compact form.
    ///
    /// - Parameter form: what the validator found the bytes to be (``JSONForm``); a form that
    ///   claims less than the bytes are is still written right, only slower.
    /// - Precondition: `bytes` is one valid JSON document (the validator accepted it). Bytes
    ///   that are not are written as they are rather than trapped on.
    public mutating func appendCompact(json bytes: UnsafeBufferPointer<UInt8>, form: JSONForm) {
        switch form {
        case .compact: append(json: bytes)
        case .plain: appendPlainCompact(bytes)
        case .general: appendGeneralCompact(bytes)
        }
    }

    /// ``appendCompact(json:form:)`` of a document whose whitespace the validator noted as it
    /// scanned it (``WhitespaceRuns``): the bytes between its runs are copied. Runs that are not
    /// those of `bytes`, whole, leave the usual walk to it.
    public mutating func appendCompact(json bytes: UnsafeBufferPointer<UInt8>, form: JSONForm, whitespace: WhitespaceRuns) {
        guard form == .plain, whitespace.describe(bytes), let source = bytes.baseAddress, let runs = whitespace.storage else {
            return appendCompact(json: bytes, form: form)
        }
        let start = written
        let output = reserve(bytes.count + 16).assumingMemoryBound(to: UInt8.self)
        let length = json_copy_between_runs(source, bytes.count, runs, whitespace.count, output)
        // `SIZE_MAX` comes back as -1.
        guard length >= 0 else {
            // Runs that do not fit the bytes (never recorded so): what was copied goes.
            written = start
            return appendPlainCompact(bytes)
        }
        written += length
    }

    /// ``appendCompact(json:form:)`` of a document with no repeated or escaped keys: one pass,
    /// dropping whitespace and rewriting escapes (`json_compact_plain`, sixteen bytes at a time:
    /// in Swift, byte by byte outside strings, a pretty printer's indentation cost more than the
    /// rest of the delivery).
    mutating func appendPlainCompact(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        // The compact form is never longer than the text (whitespace goes; every escape is
        // written in as many bytes or fewer), plus the sixteen bytes a chunk may store past its end.
        let output = reserve(bytes.count + 16).assumingMemoryBound(to: UInt8.self)
        written += json_compact_plain(source, bytes.count, output)
    }

    /// The scalar of the `\uXXXX` escape at `index` (joined with the low surrogate's escape that
    /// must follow a high one), and the index after it; nil when the escape is not valid.
    static func unicodeEscape(_ source: UnsafePointer<UInt8>, at index: Int, count: Int) -> (UInt32, Int)? {
        guard let unit = hex4(source, at: index + 2, count: count) else { return nil }
        switch unit {
        case 0xD800...0xDBFF:
            guard index + 11 < count, source[index + 6] == UInt8(ascii: "\\"), source[index + 7] == UInt8(ascii: "u"),
                let low = hex4(source, at: index + 8, count: count), (0xDC00...0xDFFF).contains(low)
            else { return nil }
            return (0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00), index + 12)
        case 0xDC00...0xDFFF:
            return nil
        default:
            return (UInt32(unit), index + 6)
        }
    }

    /// The four hexadecimal digits at `start`, nil unless there are four.
    private static func hex4(_ source: UnsafePointer<UInt8>, at start: Int, count: Int) -> UInt16? {
        guard start + 4 <= count else { return nil }
        var value: UInt16 = 0
        for position in start..<(start + 4) {
            guard let digit = JSONSyntax.hexDigit(source[position]) else { return nil }
            value = value << 4 | UInt16(digit)
        }
        return value
    }

    // MARK: A member written in

    /// Writes the member `"name":value` (an integer) at the end of the object that is the value of
    /// the key `object` of the compact object written from `start` on: `{"aps":{"alert":"x"}}`
    /// becomes `{"aps":{"alert":"x","badge":3}}`, as a `set` of a new key does to a tree. The
    /// member is not in that object already (the caller knows); when there is no such object,
    /// nothing is written.
    /// - Returns: whether the member was written.
    @discardableResult
    public mutating func insert(member name: StaticString, integer value: Int, intoObject object: StaticString, writtenFrom start: Int) -> Bool {
        guard let end = Self.endOfMemberObject(named: object, in: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self) + start, count: written - start))
        else { return false }
        let closing = start + end
        let isEmpty = base.load(fromByteOffset: closing - 1, as: UInt8.self) == UInt8(ascii: "{")
        // The member's text, written at the end, then moved in front of the object's `}`.
        let tailStart = written
        if !isEmpty { append(byte: UInt8(ascii: ",")) }
        append(byte: UInt8(ascii: "\""))
        append(bytes: UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        append("\":")
        write(integer: value)
        let member = written - tailStart
        withUnsafeTemporaryAllocation(byteCount: member, alignment: 1) { scratch in
            scratch.copyMemory(from: UnsafeRawBufferPointer(start: base + tailStart, count: member))
            // Everything from the object's `}` on moves up by the member's length.
            (base + closing + member).copyMemory(from: base + closing, byteCount: tailStart - closing)
            (base + closing).copyMemory(from: scratch.baseAddress!, byteCount: member)
        }
        return true
    }

    /// Where, in a compact object, the object that is the value of its top-level key `name`
    /// closes (the offset of its `}`); nil when there is no such key or its value is no object.
    private static func endOfMemberObject(named name: StaticString, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let reader = CompactionReader(bytes: bytes)
        guard bytes.first == UInt8(ascii: "{"), let members = reader.members(ofObjectAt: 0) else { return nil }
        let wanted = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        for member in members where reader.decodedString(member.key).elementsEqual(wanted) {
            guard bytes[member.value] == UInt8(ascii: "{"), let end = reader.valueEnd(from: member.value) else { return nil }
            return end - 1
        }
        return nil
    }

    // MARK: Any valid document

    /// ``appendCompact(json:form:)`` of any valid document: object by object, each object's
    /// members read first (their keys decoded where escaped), so that a repeated key is written
    /// once, where it first appeared, with the value it had last. Rare (repeated or escaped
    /// keys, objects of many keys), so it favours plainness over speed; it never recurses.
    mutating func appendGeneralCompact(_ bytes: UnsafeBufferPointer<UInt8>) {
        let reader = CompactionReader(bytes: bytes)
        let start = reader.skipWhitespace(from: 0)
        guard start < bytes.count, let end = reader.valueEnd(from: start), reader.skipWhitespace(from: end) == bytes.count else {
            return append(json: bytes)
        }
        // Bytes that turn out not to be JSON part of the way: what was written of them goes, and
        // they are written as they are.
        let writtenBefore = written
        func giveUp() {
            written = writtenBefore
            append(json: bytes)
        }
        // What is still to write, last first: a value at a byte offset, or a byte of punctuation.
        var tasks: [CompactionReader.Task] = [.value(start)]
        while let task = tasks.popLast() {
            switch task {
            case .byte(let byte):
                append(byte: byte)
            case .key(let range):
                write(decodedString: reader.decodedString(range))
            case .value(let position):
                switch bytes[position] {
                case UInt8(ascii: "{"):
                    guard let members = reader.members(ofObjectAt: position) else { return giveUp() }
                    append(byte: UInt8(ascii: "{"))
                    tasks.append(.byte(UInt8(ascii: "}")))
                    for (offset, member) in members.enumerated().reversed() {
                        tasks.append(.value(member.value))
                        tasks.append(.byte(UInt8(ascii: ":")))
                        tasks.append(.key(member.key))
                        if offset > 0 { tasks.append(.byte(UInt8(ascii: ","))) }
                    }
                case UInt8(ascii: "["):
                    guard let elements = reader.elements(ofArrayAt: position) else { return giveUp() }
                    append(byte: UInt8(ascii: "["))
                    tasks.append(.byte(UInt8(ascii: "]")))
                    for (offset, element) in elements.enumerated().reversed() {
                        tasks.append(.value(element))
                        if offset > 0 { tasks.append(.byte(UInt8(ascii: ","))) }
                    }
                case UInt8(ascii: "\""):
                    guard let end = reader.stringEnd(from: position) else { return giveUp() }
                    write(decodedString: reader.decodedString(position + 1..<end - 1))
                default:
                    // A number or a literal: as written.
                    guard let end = reader.valueEnd(from: position) else { return giveUp() }
                    append(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[position..<end])))
                }
            }
        }
    }
}

extension JSONWriter {
    /// Writes decoded string bytes quoted and escaped (``write(stringBytes:)``).
    fileprivate mutating func write(decodedString bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { write(stringBytes: $0) }
    }
}

/// Reads the structure of a valid JSON document for ``JSONWriter/appendGeneralCompact(_:)``:
/// where each value ends, an object's members (repeated keys resolved) and an array's elements.
/// Every read is bounded by the bytes; bytes that are not valid JSON give nil, never a trap.
struct CompactionReader {
    /// What the general compaction still has to write.
    enum Task {
        /// The value that starts at this offset.
        case value(Int)
        /// An object key: the raw bytes between its quotes.
        case key(Range<Int>)
        /// One byte of punctuation.
        case byte(UInt8)
    }

    /// One member of an object as it is written: its key (raw bytes between the quotes, from its
    /// first appearance) and the offset of its value (its last appearance's).
    struct Member {
        var key: Range<Int>
        var value: Int
    }

    let bytes: UnsafeBufferPointer<UInt8>

    /// The first offset from `index` that is not whitespace.
    func skipWhitespace(from index: Int) -> Int {
        var index = index
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return index
            }
        }
        return index
    }

    /// The offset after the string whose opening quote is at `start`.
    func stringEnd(from start: Int) -> Int? {
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""): return index + 1
            case UInt8(ascii: "\\"): index += 2
            default: index += 1
            }
        }
        return nil
    }

    /// The offset after the value that starts at `start` (containers included, nested ones too,
    /// counted without recursion).
    func valueEnd(from start: Int) -> Int? {
        var index = start
        var depth = 0
        repeat {
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                guard let end = stringEnd(from: index) else { return nil }
                index = end
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                guard depth >= 0 else { return nil }
                index += 1
            case UInt8(ascii: ","), UInt8(ascii: ":"), 0x20, 0x0A, 0x0D, 0x09:
                guard depth > 0 else { return index }
                index += 1
            default:
                index += 1
            }
        } while depth > 0 || (index < bytes.count && !Self.endsScalar(bytes[index]))
        return index
    }

    /// Whether `byte` ends a number or literal (whitespace, or a container's punctuation).
    private static func endsScalar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: true
        default: false
        }
    }

    /// The members of the object at `start`, in the order they are written: each key once, at
    /// its first appearance, with the offset of its last appearance's value.
    func members(ofObjectAt start: Int) -> [Member]? {
        var members: [Member] = []
        var positions: [[UInt8]: Int] = [:]
        var index = skipWhitespace(from: start + 1)
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "}") { return members }
        while true {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let keyEnd = stringEnd(from: index) else { return nil }
            let key = index + 1..<keyEnd - 1
            index = skipWhitespace(from: keyEnd)
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            let value = skipWhitespace(from: index + 1)
            guard value < bytes.count, let valueEnd = valueEnd(from: value) else { return nil }
            let decoded = decodedString(key)
            if let earlier = positions[decoded] {
                members[earlier].value = value
            } else {
                positions[decoded] = members.count
                members.append(Member(key: key, value: value))
            }
            index = skipWhitespace(from: valueEnd)
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "}") { return members }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index = skipWhitespace(from: index + 1)
        }
    }

    /// The offsets of the elements of the array at `start`.
    func elements(ofArrayAt start: Int) -> [Int]? {
        var elements: [Int] = []
        var index = skipWhitespace(from: start + 1)
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "]") { return elements }
        while true {
            guard index < bytes.count, let end = valueEnd(from: index) else { return nil }
            elements.append(index)
            index = skipWhitespace(from: end)
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "]") { return elements }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index = skipWhitespace(from: index + 1)
        }
    }

    /// The UTF-8 bytes a string's raw body (between its quotes) stands for, escapes decoded.
    func decodedString(_ range: Range<Int>) -> [UInt8] {
        guard let base = bytes.baseAddress else { return [] }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < range.upperBound else {
                decoded.append(byte)
                index += 1
                continue
            }
            let escape = bytes[index + 1]
            switch escape {
            case UInt8(ascii: "b"): decoded.append(0x08)
            case UInt8(ascii: "f"): decoded.append(0x0C)
            case UInt8(ascii: "n"): decoded.append(0x0A)
            case UInt8(ascii: "r"): decoded.append(0x0D)
            case UInt8(ascii: "t"): decoded.append(0x09)
            case UInt8(ascii: "u"):
                if let (scalar, end) = JSONWriter.unicodeEscape(base, at: index, count: range.upperBound),
                    let unicode = Unicode.Scalar(scalar)
                {
                    decoded.append(contentsOf: UTF8.encode(unicode)!)
                    index = end
                    continue
                }
                decoded.append(escape)
            default: decoded.append(escape)
            }
            index += 2
        }
        return decoded
    }
}
