import NIOCore
import Notifications
import OpenSSLCrypto

/// A media response body on its way into the attachment store: checked and hashed as it arrives
/// and written to a partial file through a buffer of fixed size, so a download holds at most
/// ``bufferCapacity`` bytes of its body in memory, however large the file.
///
/// The format is decided from the body's first ``MediaFormat/sniffLength`` bytes, the part of it
/// that went into the file first; until then the largest limit applies. The partial file is
/// created with the first write, so a body refused by its first bytes leaves no file behind.
/// Whoever stops early calls ``abandon()``, which removes the partial file.
struct MediaBodyWriter {
    /// The most body bytes held in memory between network reads and file writes: 256 KiB, four
    /// network reads, so a file is written in a few large writes rather than many small ones.
    static let bufferCapacity = 256 * 1024

    /// The kind `Content-Type` names, if any.
    let declared: MediaKind?
    /// The size limit of each kind.
    let maxBytes: [MediaKind: Int]
    /// Where the file goes.
    let store: AttachmentStore

    /// Bytes received and not yet written to the file.
    private var buffer: ByteBuffer
    /// The body's first bytes (at most `MediaFormat.sniffLength`), as they went to the file.
    private var head: [UInt8] = []
    /// The format, once the head is long enough to tell.
    private var format: MediaFormat?
    /// The SHA-256 of the body so far.
    private var hasher = SHA256()
    /// Body bytes received so far.
    private var size = 0
    /// The most bytes `buffer` held at once.
    private(set) var peakBuffered = 0
    /// The partial file, from the first write on.
    private var file: PartialFile?

    /// A writer for a body `Content-Type` says is of kind `declared` (nil when it does not say).
    init(declared: MediaKind?, maxBytes: [MediaKind: Int], store: AttachmentStore) {
        self.declared = declared
        self.maxBytes = maxBytes
        self.store = store
        self.buffer = ByteBufferAllocator().buffer(capacity: Self.bufferCapacity)
    }

    /// Takes in `chunk`; throws as soon as the body is known to be unacceptable.
    mutating func append(_ chunk: ByteBuffer) async throws(AttachmentError) {
        size += chunk.readableBytes
        hasher.update(chunk.readableBytesView)
        if head.count < MediaFormat.sniffLength {
            head.append(contentsOf: chunk.readableBytesView.prefix(MediaFormat.sniffLength - head.count))
        }
        if format == nil, head.count >= MediaFormat.sniffLength {
            format = try Self.decide(head, declared: declared)
        }
        let (kind, limit) = Self.limit(of: format?.kind ?? declared, in: maxBytes)
        if size > limit {
            throw .tooLarge(kind: kind, limit: limit, read: size)
        }
        if buffer.readableBytes + chunk.readableBytes > Self.bufferCapacity {
            try await flush()
        }
        if chunk.readableBytes >= Self.bufferCapacity {
            // Larger than the buffer itself: written as it came, without a copy.
            try await write(chunk)
        } else {
            var chunk = chunk
            buffer.writeBuffer(&chunk)
            peakBuffered = max(peakBuffered, buffer.readableBytes)
        }
    }

    /// Completes the file once the body ended and puts it in the store.
    mutating func finish() async throws(AttachmentError) -> StoredMedia {
        // (Not `??`: its autoclosure would turn the typed error into `any Error`.)
        let format: MediaFormat
        if let known = self.format {
            format = known
        } else {
            format = try Self.decide(head, declared: declared)
        }
        try await flush()
        guard let file else { throw .storeFailed("no file was written") }
        let digest = Hex.lowercase(hasher.finalize())
        let url = try await store.keep(file, sha256: digest, format: format)
        self.file = nil
        return StoredMedia(format: format, file: url, size: size, sha256: digest, peakBufferedBytes: peakBuffered)
    }

    /// Removes the partial file, if one was started (the download failed or was cut off).
    mutating func abandon() async {
        guard let file else { return }
        self.file = nil
        await store.discard(file)
    }

    /// Writes what the buffer holds to the file (creating the file the first time).
    private mutating func flush() async throws(AttachmentError) {
        try await write(buffer)
        buffer.clear()
    }

    /// Appends `bytes` to the file, creating it first when needed.
    private mutating func write(_ bytes: ByteBuffer) async throws(AttachmentError) {
        let file: PartialFile
        if let existing = self.file {
            file = existing
        } else {
            file = try await store.createPartial()
            self.file = file
        }
        if bytes.readableBytes > 0 { try await file.append(bytes) }
    }

    /// The limit of `kind`; while the kind is unknown, the largest limit (and its kind).
    static func limit(of kind: MediaKind?, in maxBytes: [MediaKind: Int]) -> (kind: MediaKind, limit: Int) {
        if let kind, let limit = maxBytes[kind] { return (kind, limit) }
        let largest = MediaKind.allCases.max { (maxBytes[$0] ?? 0) < (maxBytes[$1] ?? 0) } ?? .video
        return (largest, maxBytes[largest] ?? 0)
    }

    /// The format of `head`, which must agree with the declared kind.
    private static func decide(_ head: [UInt8], declared: MediaKind?) throws(AttachmentError) -> MediaFormat {
        guard let format = MediaFormat.sniff(head, declaredKind: declared) else { throw .unsupportedFormat }
        if let declared, declared != format.kind { throw .formatMismatch(format: format, declared: declared) }
        return format
    }
}
