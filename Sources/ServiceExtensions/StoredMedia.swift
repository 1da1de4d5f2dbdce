import Foundation

/// A downloaded media file, checked and in the attachment store.
struct StoredMedia: Sendable {
    /// The format the bytes showed.
    let format: MediaFormat
    /// The file in the store.
    let file: URL
    /// The body's size in bytes.
    let size: Int
    /// The body's SHA-256, lower-case hex.
    let sha256: String
    /// The most body bytes the download held in memory at once: at most
    /// ``MediaBodyWriter/bufferCapacity``, whatever the file's size.
    let peakBufferedBytes: Int
}
