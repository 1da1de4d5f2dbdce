/// Writes JSON values compactly: no whitespace, UTF-8, `/` not escaped, numbers as written.
struct JSONWriter {
    /// The bytes written so far.
    var output: [UInt8] = []

    /// Makes a writer with room for `capacity` bytes.
    init(capacity: Int = 256) { output.reserveCapacity(capacity) }

    /// Appends a value.
    mutating func write(_ value: JSONValue) {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .number(let number): writeRaw(number.text)
        case .string(let string): write(string: string)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                write(element)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object): write(object: object)
        }
    }

    /// Appends an object.
    mutating func write(object: JSONObject) {
        output.append(UInt8(ascii: "{"))
        for (position, member) in object.members.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            write(string: member.key)
            output.append(UInt8(ascii: ":"))
            write(member.value)
        }
        output.append(UInt8(ascii: "}"))
    }

    /// Appends a quoted, escaped string.
    mutating func write(string: String) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var runStart = 0
            for position in 0..<bytes.count {
                let byte = bytes[position]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                runStart = position + 1
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

    /// Appends text as it is.
    private mutating func writeRaw(_ text: String) {
        output.append(contentsOf: text.utf8)
    }

    /// Appends a literal.
    private mutating func append(_ literal: StaticString) {
        output.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
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
