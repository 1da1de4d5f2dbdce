/// Where a document's whitespace outside strings lies, as ``JSONScanner`` found it while
/// validating: what ``JSONWriter/appendCompact(json:form:whitespace:)`` needs to drop it with a
/// copy per run of kept bytes, rather than another walk over every byte.
///
/// A provider's spaced or pretty JSON (Python's `json.dumps`, a pretty printer's lines) has a
/// run of whitespace every few bytes. The scanner steps over each run anyway; noting where it
/// starts and ends costs two stores, and saves the compaction its sixteen-byte walk with a
/// string-parity mask per chunk (`bench counts`, pretty JSON: the compaction's 1,800
/// instructions per request became about 830 and a few `memcpy` calls).
///
/// The runs live in storage the caller lends (the worker's output buffer keeps it for every
/// record) and are usable only for the document they were recorded over, whole: a document with
/// more runs than the storage holds, or with an escape the writer rewrites (`\/`, `\u00e9`), is
/// compacted the usual way.
public struct WhitespaceRuns {
    /// The runs, each two offsets: where it starts and where it ends (the next byte kept).
    @usableFromInline let storage: UnsafeMutablePointer<UInt32>?
    /// How many runs the storage holds.
    @usableFromInline let capacity: Int
    /// How many runs are recorded.
    public private(set) var count = 0
    /// Whether every run of the document is recorded and its strings need no rewriting; false
    /// until a scan of a whole document ends well.
    public private(set) var isComplete = false
    /// The document the runs were recorded over: its first byte and its length.
    @usableFromInline private(set) var document: UnsafeRawPointer?
    @usableFromInline private(set) var documentCount = 0

    /// Runs kept in `storage` (two offsets per run); the storage must outlive every use of the runs.
    public init(storage: UnsafeMutableBufferPointer<UInt32>) {
        self.storage = storage.baseAddress
        capacity = storage.count / 2
    }

    /// No storage: nothing is recorded, and the writer compacts the usual way.
    public static var none: WhitespaceRuns { WhitespaceRuns(storage: UnsafeMutableBufferPointer(start: nil, count: 0)) }

    /// Forgets what was recorded and starts on `bytes`; the runs are not complete until
    /// ``finish()``.
    @usableFromInline mutating func start(_ bytes: UnsafeBufferPointer<UInt8>) {
        count = 0
        isComplete = false
        // Offsets are kept in 32 bits: a longer document is compacted the usual way.
        document = bytes.count <= Int(UInt32.max) ? UnsafeRawPointer(bytes.baseAddress) : nil
        documentCount = bytes.count
    }

    /// Notes the run `start..<end`; past the storage's capacity the runs are no longer complete
    /// (``finish()`` will not make them so).
    @usableFromInline mutating func record(_ start: Int, _ end: Int) {
        guard count < capacity, let storage else {
            document = nil
            return
        }
        storage[2 * count] = UInt32(truncatingIfNeeded: start)
        storage[2 * count + 1] = UInt32(truncatingIfNeeded: end)
        count += 1
    }

    /// Notes that the document's bytes are more than its whitespace away from the compact form
    /// (an escape the writer rewrites): the runs cannot compact it.
    @usableFromInline mutating func abandon() {
        document = nil
    }

    /// The scan reached the document's end: the runs are complete unless abandoned.
    @usableFromInline mutating func finish() {
        isComplete = document != nil && storage != nil
    }

    /// The scan failed: nothing recorded may be used.
    @usableFromInline mutating func discard() {
        isComplete = false
        document = nil
    }

    /// Whether the runs are the whole whitespace of `bytes`, and its only difference from the
    /// compact form.
    func describe(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        isComplete && document == UnsafeRawPointer(bytes.baseAddress) && documentCount == bytes.count
    }
}
