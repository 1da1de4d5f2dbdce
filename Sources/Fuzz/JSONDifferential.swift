import JSON
import Notifications

/// The checks on one document's bytes (a record's value): the project's readers of JSON against
/// each other and against Foundation's `JSONSerialization`.
///
/// - The parser, the parser that keeps repeated keys, and the scanner (`JSONScanner`, the
///   validator's fast path) accept exactly the same documents, less the scanner's documented
///   refusals: an escaped key, a repeated key, an object of more than `maximumKeys` keys.
/// - An accepted document's compact form is the same bytes whichever way it is written: from the
///   tree (`serialized()`), and from the bytes in each form the validator may find them in
///   (`appendCompact(json:form:)`: `general` always, `plain` where the scanner accepted, the bytes
///   themselves where the scanner found them compact); it parses back to the same tree.
/// - The payload scan (`Payload.scan`, section 2's rules on the bytes) accepts only payloads the
///   tree's rules (`Payload(validating:)`) accept, with the same traits.
/// - Foundation accepts what the parser accepts and nothing else, and reads the same values,
///   except where the contract chose otherwise (``FoundationJSON``).
enum JSONDifferential {
    /// Runs every check on `bytes`, noting what fails in `findings`.
    static func check(_ bytes: [UInt8], findings: inout Findings) {
        bytes.withUnsafeBufferPointer { check($0, findings: &findings) }
    }

    /// Runs every check on `bytes`.
    static func check(_ bytes: UnsafeBufferPointer<UInt8>, findings: inout Findings) {
        let parsed = try? JSONValue(parsing: bytes)
        let withRepeats = try? JSONValue(parsingKeepingRepeatedKeys: bytes)
        if (parsed == nil) != (withRepeats == nil) {
            findings.fail("the parser \(verb(parsed != nil)) the document, the parser that keeps repeated keys \(verb(withRepeats != nil)) it")
        }
        let checked = scan(bytes, checksKeys: true)
        let unchecked = scan(bytes, checksKeys: false)

        // The scanner against the parser: the same documents, less its refusals of keys.
        let escapedKey = parsed != nil && hasEscapedKey(bytes)
        let (repeatedKey, widestObject) = withRepeats.map(keyFacts) ?? (false, 0)
        let refusesKeys = escapedKey || repeatedKey || widestObject > JSONScanner.maximumKeys
        if (checked != nil) != (parsed != nil && !refusesKeys) {
            findings.fail(
                "the scanner \(verb(checked != nil)) the document, the parser \(verb(parsed != nil)) it (escaped key: \(escapedKey), repeated key: \(repeatedKey), widest object: \(widestObject) keys)")
        }
        if (unchecked != nil) != (parsed != nil && !escapedKey) {
            findings.fail("the scanner without key checks \(verb(unchecked != nil)) the document, the parser \(verb(parsed != nil)) it (escaped key: \(escapedKey))")
        }
        if let checked, let unchecked, checked != unchecked {
            findings.fail("the scanner finds the document compact \(checked) with key checks, \(unchecked) without")
        }

        if let parsed {
            checkCompaction(bytes, parsed, scannedCompact: checked, findings: &findings)
            checkWhitespaceRuns(bytes, parsed, findings: &findings)
            checkPayloadScan(bytes, parsed, findings: &findings)
        }
        FoundationJSON.compare(bytes, withRepeats: withRepeats, findings: &findings)
    }

    /// The compact forms of an accepted document agree with each other and parse back to it.
    private static func checkCompaction(
        _ bytes: UnsafeBufferPointer<UInt8>, _ parsed: JSONValue, scannedCompact: Bool?, findings: inout Findings
    ) {
        let serialized = parsed.serialized()
        if (try? JSONValue(parsing: serialized)) != parsed {
            findings.fail("the serialised document does not parse back to the same value: \(text(serialized))")
        }
        var forms: [JSONForm] = [.general]
        if let scannedCompact {
            forms.append(.plain)
            if scannedCompact { forms.append(.compact) }
        }
        for form in forms {
            var writer = JSONWriter(capacity: bytes.count + 16)
            writer.appendCompact(json: bytes, form: form)
            let written = writer.finish()
            if written != serialized {
                findings.fail("appendCompact(form: \(form)) writes \(text(written)), the tree serialises to \(text(serialized))")
            }
        }
    }

    /// The compaction between the whitespace runs the scanner noted writes what the tree
    /// serialises, with room for every run and with room for two (when the runs do not fit, the
    /// writer walks the bytes as it does without runs).
    private static func checkWhitespaceRuns(_ bytes: UnsafeBufferPointer<UInt8>, _ parsed: JSONValue, findings: inout Findings) {
        let serialized = parsed.serialized()
        for capacity in [512, 2] {
            let storage = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: 2 * capacity)
            defer { storage.deallocate() }
            var whitespace = WhitespaceRuns(storage: storage)
            var compact: Bool?
            try? JSONScanner.withScanner(over: bytes, maxDepth: JSONValue.maximumDepth, recording: &whitespace) { scanner throws(JSONScanner.Unusual) in
                try scanner.skipValue()
                try scanner.finish()
                compact = scanner.isCompact
            }
            guard let compact else { return }
            var writer = JSONWriter(capacity: bytes.count + 16)
            writer.appendCompact(json: bytes, form: compact ? .compact : .plain, whitespace: whitespace)
            let written = writer.finish()
            if written != serialized {
                findings.fail(
                    "appendCompact between \(whitespace.count) whitespace runs (complete: \(whitespace.isComplete)) writes \(text(written)), the tree serialises to \(text(serialized))")
            }
        }
    }

    /// The payload scan accepts only what the tree's rules accept, and reads the same traits.
    private static func checkPayloadScan(_ bytes: UnsafeBufferPointer<UInt8>, _ parsed: JSONValue, findings: inout Findings) {
        var traits = Payload.Traits()
        guard Payload.scan(bytes, into: &traits) != nil else { return }
        let payload: Payload
        do throws(PayloadError) {
            payload = try Payload(validating: parsed)
        } catch {
            return findings.fail("the payload scan accepts a payload the tree's rules refuse: \(error.message)")
        }
        let tree = payload.traits
        let scanned = [
            traits.hasAlert, traits.hasAlertText, traits.hasBadge, traits.badgeIsZero, traits.hasSound, traits.contentAvailable,
            traits.mutableContent, traits.contentChanged, traits.hidesViewButton,
        ]
        let read = [
            tree.hasAlert, tree.hasAlertText, tree.hasBadge, tree.badgeIsZero, tree.hasSound, tree.contentAvailable, tree.mutableContent,
            tree.contentChanged, tree.hidesViewButton,
        ]
        if scanned != read || traits.badgeNumber != tree.badgeNumber || traits.category != tree.category
            || traits.interruptionLevel != tree.interruptionLevel
        {
            findings.fail("the payload scan reads traits \(traits), the tree's rules \(tree)")
        }
    }

    /// Scans the whole document with the scanner: nil when it refuses it, else whether it found
    /// the bytes compact.
    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, checksKeys: Bool) -> Bool? {
        var compact: Bool?
        try? JSONScanner.withScanner(over: bytes, maxDepth: JSONValue.maximumDepth, checksKeys: checksKeys) { scanner throws(JSONScanner.Unusual) in
            try scanner.skipValue()
            try scanner.finish()
            compact = scanner.isCompact
        }
        return compact
    }

    /// Whether some object of a valid document has a key with an escape (a backslash between its
    /// quotes): a walk of the bytes that knows only where keys are.
    static func hasEscapedKey(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var inObject: [Bool] = []
        var expectsKey = false
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                var end = index + 1
                var escaped = false
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                    if bytes[end] == UInt8(ascii: "\\") {
                        escaped = true
                        end += 1
                    }
                    end += 1
                }
                if expectsKey, escaped { return true }
                expectsKey = false
                index = end
            case UInt8(ascii: "{"):
                inObject.append(true)
                expectsKey = true
            case UInt8(ascii: "["):
                inObject.append(false)
                expectsKey = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = inObject.popLast()
                expectsKey = false
            case UInt8(ascii: ","):
                expectsKey = inObject.last == true
            case UInt8(ascii: ":"):
                expectsKey = false
            default:
                break
            }
            index += 1
        }
        return false
    }

    /// Whether some object repeats a key (the same bytes), and the most keys an object has, read
    /// off a tree that keeps every member.
    private static func keyFacts(_ value: JSONValue) -> (repeated: Bool, widest: Int) {
        var repeated = false
        var widest = 0
        var pending = [value]
        while let next = pending.popLast() {
            switch next {
            case .array(let elements):
                pending += elements
            case .object(let object):
                widest = max(widest, object.members.count)
                var seen = Set<[UInt8]>()
                for member in object.members {
                    if !seen.insert(Array(member.key.utf8)).inserted { repeated = true }
                    pending.append(member.value)
                }
            default:
                break
            }
        }
        return (repeated, widest)
    }

    private static func verb(_ accepts: Bool) -> String { accepts ? "accepts" : "refuses" }

    /// Bytes shown in a finding: as text, cut at 300 bytes.
    static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(300), as: UTF8.self) + (bytes.count > 300 ? "… (\(bytes.count) bytes)" : "")
    }
}
