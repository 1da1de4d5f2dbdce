import Records
package import JSON

extension Payload {
    /// Validates a body straight from its bytes (SEMANTICS section 2, not the size limit), building no
    /// tree: the payload keeps the bytes and the traits the rules read, and builds its tree only if
    /// asked for it.
    ///
    /// Nil when the bytes are anything but a plain valid payload (invalid, or unusual in a way
    /// `JSONScanner` leaves to the parser): the caller then validates the parsed tree, which decides
    /// as before and words the error.
    init?(viewing bytes: RecordBytes, maxDepth: Int = JSONValue.maximumDepth) {
        var traits = Traits()
        guard let isCompact = bytes.withUnsafeBufferPointer({ Self.scan($0, into: &traits, maxDepth: maxDepth) }) else { return nil }
        storage = Storage(bytes: bytes, form: isCompact ? .compact : .plain, traits: traits)
    }

    /// A payload whose bytes were validated already, with what the validation found: its traits,
    /// and the form of its bytes (``JSONForm``).
    init(validatedBytes bytes: RecordBytes, form: JSONForm, traits: Traits) {
        storage = Storage(bytes: bytes, form: form, traits: traits)
    }

    /// Scans a body where it lies, into `traits` (fresh): what the rules read of it. Returns
    /// whether its bytes are compact, or nil when it is not a plain valid payload (the parser
    /// decides those).
    ///
    /// Package-wide so that the fuzzer (`Sources/Fuzz`) holds it to the tree's rules on every
    /// payload it makes.
    package static func scan(_ bytes: UnsafeBufferPointer<UInt8>, into traits: inout Traits, maxDepth: Int = JSONValue.maximumDepth) -> Bool? {
        var whitespace = WhitespaceRuns.none
        return scan(bytes, into: &traits, maxDepth: maxDepth, recording: &whitespace)
    }

    /// ``scan(_:into:maxDepth:)`` that notes where the body's whitespace lies (``WhitespaceRuns``).
    package static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>, into traits: inout Traits, maxDepth: Int = JSONValue.maximumDepth,
        recording whitespace: inout WhitespaceRuns
    ) -> Bool? {
        var isCompact: Bool?
        try? JSONScanner.withScanner(over: bytes, maxDepth: maxDepth, recording: &whitespace) { scanner throws(JSONScanner.Unusual) in
            isCompact = try Self.scanBody(&scanner, into: &traits)
        }
        return isCompact
    }

    /// Checks the body at the scanner's cursor: an object with one `aps` object and nothing after
    /// it; whether its bytes are compact.
    private static func scanBody(_ scanner: inout JSONScanner, into traits: inout Traits) throws(JSONScanner.Unusual) -> Bool {
        var body = try scanner.openObject()
        var sawAPS = false
        while let key = try scanner.nextKey(&body) {
            if PayloadKey(bytes: scanner.slice(key)) == .aps {
                // A repeated key is refused by the scanner (checksKeys), so `aps` comes once.
                try APS.scan(&scanner, into: &traits)
                sawAPS = true
            } else {
                // Custom keys are the app's: checked as JSON, kept as they are.
                try scanner.skipValue()
            }
        }
        try scanner.finish()
        guard sawAPS else { throw JSONScanner.Unusual() }
        return scanner.isCompact
    }
}

extension Payload {
    /// About how many bytes the body takes written out: room to reserve, not a measure.
    package var byteCountHint: Int { storage.bytes?.count ?? 512 }
}

extension JSONWriter {
    /// Appends a payload's body compactly: from its bytes when it was validated from bytes
    /// (as they are when they are compact, else compacted from the text: no tree is built), else
    /// from its tree (content an extension made).
    package mutating func write(payload: Payload) {
        if let bytes = payload.storage.bytes {
            let form = payload.storage.form
            bytes.withUnsafeBufferPointer { appendCompact(json: $0, form: form) }
        } else {
            write(object: payload.json)
        }
    }
}
