import ArgumentParser

/// How the benchmarks' request values are spaced. Providers' JSON comes in every style, and every
/// style must take the same path at the same cost (the delivered payload is written compact from
/// the scanner's tokens whatever the spacing): a bench proves nothing about a style it never feeds.
enum JSONStyle: String, CaseIterable, ExpressibleByArgument, Sendable {
    /// No whitespace: what Java's and Go's encoders write.
    case compact
    /// A space after every `,` and `:` outside strings: what Python's `json.dumps(value)` writes
    /// by default.
    case spaced
    /// What `json.dumps(value, indent=2)` writes: each member and element on a line of its own,
    /// indented by two spaces a level, a space after every `:`, empty containers as `{}` and `[]`.
    case pretty
}

/// Rewrites compact JSON text in a ``JSONStyle``, byte by byte as it comes: strings are copied as
/// they are, the rest gets the style's whitespace. Text that ends early (broken JSON) is rewritten
/// as far as it goes, so a broken record stays broken in every style.
///
/// A value type: a copy carries on from the same point, which is how
/// ``BenchRequest/styled(prefix:paddedTo:closing:style:)`` learns how long a value's end will be
/// before it pads the value's middle.
struct StyledJSONWriter {
    /// The style written.
    let style: JSONStyle
    /// The text written so far.
    private(set) var output: [UInt8] = []
    /// How many containers are open.
    private var depth = 0
    /// Whether the last byte written is inside a string, and right after its backslash.
    private var inString = false
    private var escaped = false
    /// Pretty: a container was just opened, and its line break waits for the next byte, which may
    /// close it at once (`{}`: no line break then, as `json.dumps` writes an empty one).
    private var opened = false

    /// A writer of `style` with nothing written.
    init(style: JSONStyle) { self.style = style }

    /// Writes `bytes` of compact JSON text in the style.
    mutating func write(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { write(byte) }
    }

    /// Writes one byte of compact JSON text in the style.
    mutating func write(_ byte: UInt8) {
        if inString {
            output.append(byte)
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            return
        }
        if opened {
            opened = false
            if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                depth -= 1
                output.append(byte)
                return
            }
            lineBreak()
        }
        switch byte {
        case UInt8(ascii: "\""):
            inString = true
            output.append(byte)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            output.append(byte)
            depth += 1
            opened = style == .pretty
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            depth -= 1
            if style == .pretty { lineBreak() }
            output.append(byte)
        case UInt8(ascii: ","):
            output.append(byte)
            switch style {
            case .compact: break
            case .spaced: output.append(UInt8(ascii: " "))
            case .pretty: lineBreak()
            }
        case UInt8(ascii: ":"):
            output.append(byte)
            if style != .compact { output.append(UInt8(ascii: " ")) }
        default:
            output.append(byte)
        }
    }

    /// A new line, indented to the current depth.
    private mutating func lineBreak() {
        output.append(UInt8(ascii: "\n"))
        output += repeatElement(UInt8(ascii: " "), count: 2 * max(depth, 0))
    }
}
