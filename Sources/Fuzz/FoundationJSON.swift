import Foundation
import JSON

/// The second opinion on a document: Foundation's `JSONSerialization` (fragments allowed, so that
/// it judges the same grammar as the parser), compared with the project's parser, less the
/// differences that are the contract's choices (SEMANTICS section 2) or Foundation's leniencies:
///
/// - **Encodings.** Foundation reads UTF-16 and UTF-32 (told by a byte-order mark or by the zero
///   bytes among the first four) and skips a UTF-8 byte-order mark. A payload is UTF-8 JSON text
///   (RFC 8259 section 8.1: no byte-order mark), so the parser refuses those bytes. Excused: the
///   parser refuses, Foundation accepts, and the bytes begin with a byte-order mark or hold a zero
///   byte among their first four.
/// - **Trailing commas.** Foundation (swift-corelibs-foundation on Swift 6.3) accepts `[1,]` and
///   `{"a":1,}`, which JSON's grammar does not allow. Excused: the parser refuses the bytes and
///   accepts them once every comma before a `]` or `}` is taken out.
/// - **Numbers beyond a Double.** Foundation refuses a number it cannot hold (`1e400`, four
///   hundred nines: "is not representable in Swift"). The contract keeps numbers as written
///   ("large integers are not rounded"), so the parser accepts them. Excused: the parser accepts,
///   Foundation refuses, and some number of the document is infinite as a Double.
/// - **Repeated keys.** Both keep the last value; the parser keeps the key where it first
///   appeared, and keys are told apart by their bytes, where Foundation's dictionary merges keys
///   Swift's `String` finds equal (`"é"` written precomposed and decomposed). Compared so: the
///   parser's members, in the order written, merged into a Swift dictionary as Foundation does.
/// - **A string's leading byte-order mark.** Foundation drops a U+FEFF written as its UTF-8 bytes
///   at the start of any string, key or value (`"\u{FEFF}home"` reads as `"home"`); JSON keeps
///   it, a character like any other. Compared so: a string of the parser's that begins with
///   U+FEFF also matches itself without it, and keys are merged without it.
/// - **Number values** are compared as Doubles (Foundation's `NSDecimalNumber` converts with a
///   relative error up to about 1e-15), within a relative 1e-9.
///
/// Nesting is not excused: both refuse a document nested deeper than 512 levels (the contract's
/// `InvalidPayload`) and accept one of 512.
enum FoundationJSON {
    /// Compares Foundation's reading of `bytes` with the parser's (`withRepeats`: every member of
    /// a repeated key kept, in the order written).
    static func compare(_ bytes: UnsafeBufferPointer<UInt8>, withRepeats: JSONValue?, findings: inout Findings) {
        let theirs = try? JSONSerialization.jsonObject(with: Data(buffer: bytes), options: [.fragmentsAllowed])
        switch (withRepeats, theirs) {
        case (nil, nil):
            return
        case (nil, .some):
            if startsWithOtherEncoding(bytes) || acceptsWithoutTrailingCommas(bytes) { return }
            findings.fail("Foundation accepts a document the parser refuses")
        case (.some(let ours), nil):
            if hasInfiniteNumber(ours) { return }
            findings.fail("Foundation refuses a document the parser accepts")
        case (.some(let ours), .some(let theirs)):
            if let difference = difference(ours, theirs, at: "") {
                findings.fail("Foundation reads a different value at \(difference.isEmpty ? "the top" : difference)")
            }
        }
    }

    /// Whether Foundation reads `bytes` as another encoding than UTF-8, or skips a mark first.
    static func startsWithOtherEncoding(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let head = Array(bytes.prefix(4))
        let marks: [[UInt8]] = [[0xEF, 0xBB, 0xBF], [0xFE, 0xFF], [0xFF, 0xFE], [0x00, 0x00, 0xFE, 0xFF]]
        return marks.contains { head.starts(with: $0) } || head.contains(0)
    }

    /// Whether the parser accepts `bytes` once every comma followed (after whitespace) by `]` or
    /// `}` outside strings is taken out.
    static func acceptsWithoutTrailingCommas(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count)
        var inString = false
        var index = 0
        var removed = false
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                kept.append(byte)
                if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                    kept.append(bytes[index + 1])
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: ",") {
                var next = index + 1
                while next < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[next]) { next += 1 }
                if next < bytes.count, bytes[next] == UInt8(ascii: "]") || bytes[next] == UInt8(ascii: "}") {
                    removed = true
                } else {
                    kept.append(byte)
                }
            } else {
                if byte == UInt8(ascii: "\"") { inString = true }
                kept.append(byte)
            }
            index += 1
        }
        return removed && (try? JSONValue(parsing: kept)) != nil
    }

    /// Whether some number of `value` is infinite as a Double.
    static func hasInfiniteNumber(_ value: JSONValue) -> Bool {
        var pending = [value]
        while let next = pending.popLast() {
            switch next {
            case .number(let number): if number.doubleValue.isInfinite { return true }
            case .array(let elements): pending += elements
            case .object(let object): pending += object.members.map(\.value)
            default: break
            }
        }
        return false
    }

    /// Where `ours` (every member kept, in order) and Foundation's `theirs` differ, as a path;
    /// nil when they agree.
    static func difference(_ ours: JSONValue, _ theirs: Any, at path: String) -> String? {
        switch ours {
        case .null:
            return theirs is NSNull ? nil : path
        case .bool(let value):
            return ((theirs as? Bool) ?? (theirs as? NSNumber)?.boolValue) == value ? nil : path
        case .number(let number):
            guard let double = doubleValue(theirs) else { return path }
            return sameNumber(number.doubleValue, double) ? nil : "\(path) (\(number.text) against \(theirs))"
        case .string(let value):
            let theirs = theirs as? String
            return theirs == value || theirs == withoutLeadingMark(value) ? nil : path
        case .array(let elements):
            guard let theirs = theirs as? [Any], theirs.count == elements.count else { return path }
            for (index, element) in elements.enumerated() {
                if let difference = difference(element, theirs[index], at: "\(path)[\(index)]") { return difference }
            }
            return nil
        case .object(let object):
            guard let theirs = theirs as? [String: Any] else { return path }
            // As Foundation builds it: in the order written, the last value of equal keys wins.
            var merged: [String: JSONValue] = [:]
            for member in object.members { merged[withoutLeadingMark(member.key)] = member.value }
            guard merged.count == theirs.count else { return "\(path) (\(merged.count) keys against \(theirs.count))" }
            for (key, value) in merged {
                guard let other = theirs[key] else { return "\(path).\(key)" }
                if let difference = difference(value, other, at: "\(path).\(key)") { return difference }
            }
            return nil
        }
    }

    /// `text` less a leading U+FEFF, as Foundation reads it.
    static func withoutLeadingMark(_ text: String) -> String {
        text.unicodeScalars.first == "\u{FEFF}" ? String(text.unicodeScalars.dropFirst()) : text
    }

    /// A number Foundation read, as a Double (an `NSNumber`, an `NSDecimalNumber` for long
    /// integers); nil for anything else.
    static func doubleValue(_ theirs: Any) -> Double? {
        if let number = theirs as? NSNumber { return number.doubleValue }
        if let decimal = theirs as? Decimal { return NSDecimalNumber(decimal: decimal).doubleValue }
        return nil
    }

    /// Whether two readings of a number agree: equal, or within a relative 1e-9.
    static func sameNumber(_ ours: Double, _ theirs: Double) -> Bool {
        ours == theirs || abs(ours - theirs) <= 1e-9 * max(abs(ours), abs(theirs))
    }
}
