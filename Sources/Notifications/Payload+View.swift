import Records
import JSON

extension Payload {
    /// Validates a body straight from its bytes (SEMANTICS section 2, not the size limit), building no
    /// tree: the payload keeps the bytes and the traits the rules read, and builds its tree only if
    /// asked for it.
    ///
    /// Nil when the bytes are anything but a plain valid payload (invalid, or unusual in a way
    /// `JSONScanner` leaves to the parser): the caller then validates the parsed tree, which decides
    /// as before and words the error.
    init?(viewing bytes: RecordBytes, maxDepth: Int = JSONValue.maximumDepth) {
        guard let scanned = bytes.withUnsafeBufferPointer({ Self.scan($0, maxDepth: maxDepth) }) else { return nil }
        storage = Storage(bytes: bytes, isCompact: scanned.isCompact, traits: scanned.traits)
    }

    /// A payload whose bytes were scanned already (``scan(_:maxDepth:)``), with what the scan found.
    init(validatedBytes bytes: RecordBytes, isCompact: Bool, traits: Traits) {
        storage = Storage(bytes: bytes, isCompact: isCompact, traits: traits)
    }

    /// Scans a body where it lies: what the rules read of it and whether its bytes are compact,
    /// or nil when it is not a plain valid payload (the parser decides those).
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONValue.maximumDepth) -> (traits: Traits, isCompact: Bool)? {
        var scanned: (traits: Traits, isCompact: Bool)?
        try? JSONScanner.withScanner(over: bytes, maxDepth: maxDepth) { scanner throws(JSONScanner.Unusual) in
            scanned = try Self.scanBody(&scanner)
        }
        return scanned
    }

    /// Checks the body at the scanner's cursor: an object with one `aps` object and nothing after it.
    private static func scanBody(_ scanner: inout JSONScanner) throws(JSONScanner.Unusual) -> (traits: Traits, isCompact: Bool) {
        var body = try scanner.openObject()
        var traits: Traits?
        while let key = try scanner.nextKey(&body) {
            if PayloadKey(bytes: scanner.slice(key)) == .aps {
                traits = try APS.scan(&scanner)
            } else {
                // Custom keys are the app's: checked as JSON, kept as they are.
                try scanner.skipValue()
            }
        }
        try scanner.finish()
        guard let traits else { throw JSONScanner.Unusual() }
        return (traits, scanner.isCompact)
    }
}

extension Payload {
    /// About how many bytes the body takes written out: room to reserve, not a measure.
    package var byteCountHint: Int { storage.bytes?.count ?? 512 }
}

extension JSONWriter {
    /// Appends a payload's body: its bytes as they came in when they are compact, else its tree.
    package mutating func write(payload: Payload) {
        if let bytes = payload.storage.compactBytes {
            bytes.withUnsafeBufferPointer { append(json: $0) }
        } else {
            write(object: payload.json)
        }
    }
}
