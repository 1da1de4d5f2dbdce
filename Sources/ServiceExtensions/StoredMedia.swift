/// A downloaded media file, fully read and checked, not yet stored.
struct MediaDownload: Sendable {
    /// The format the bytes showed.
    let format: MediaFormat
    /// The whole body.
    let bytes: [UInt8]
    /// The body's SHA-256, lower-case hex.
    let sha256: String
}
