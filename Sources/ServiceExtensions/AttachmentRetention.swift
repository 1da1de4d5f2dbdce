/// How long and how much an attachment store keeps: files older than ``maxAge`` go, and so do the
/// oldest files while all of them together are larger than ``maxTotalBytes``.
struct AttachmentRetention: Sendable, Hashable {
    /// The default of `storeMaxAge`: a day, long enough for a device to fetch what it was sent.
    static let defaultMaxAge: Duration = .seconds(24 * 60 * 60)
    /// The default of `storeMaxBytes`: 1 GB, twenty of the largest videos Apple accepts.
    static let defaultMaxTotalBytes = 1_000_000_000

    /// The age (since the file was stored or last reused) past which a file is removed.
    let maxAge: Duration
    /// The size the store's files may take together; the oldest are removed beyond it.
    let maxTotalBytes: Int

    /// The defaults.
    static let standard = AttachmentRetention(maxAge: defaultMaxAge, maxTotalBytes: defaultMaxTotalBytes)

    /// How often the store is swept for age: a quarter of ``maxAge``, at least every minute and at
    /// most every second, so a file outlives its age by at most that much. (Size is also checked
    /// after every stored file.)
    var sweepInterval: Duration {
        min(.seconds(60), max(.seconds(1), maxAge / 4))
    }
}
