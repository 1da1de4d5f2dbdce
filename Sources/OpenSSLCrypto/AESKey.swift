import COpenSSLDigest

/// An AES key of 128, 192 or 256 bits, kept in memory of its own that is cleared when the last
/// copy of the key goes.
package struct AESKey: Sendable {
    /// The key's bytes.
    private let storage: Storage

    /// The key `bytes` hold: 16, 24 or 32 of them.
    /// - Throws: ``AESGCMError/invalidKeySize(_:)`` for any other count.
    package init(_ bytes: some Sequence<UInt8>) throws(AESGCMError) {
        let storage = bytes.withContiguousStorageIfAvailable(Storage.init(copying:)) ?? Self.storage(gathering: bytes)
        guard [16, 24, 32].contains(storage.bytes.count) else { throw .invalidKeySize(storage.bytes.count) }
        self.storage = storage
    }

    /// The key's size in bytes: 16, 24 or 32.
    package var byteCount: Int { storage.bytes.count }

    /// Lends the key's bytes to `body`, which must not keep the pointer.
    func withUnsafeBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        body(UnsafeBufferPointer(storage.bytes))
    }

    /// The storage of a key whose bytes are not contiguous: gathered into an array first, which
    /// is cleared once copied.
    private static func storage(gathering bytes: some Sequence<UInt8>) -> Storage {
        var gathered = Array(bytes)
        defer { gathered.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        return gathered.withUnsafeBufferPointer(Storage.init(copying:))
    }

    /// The one owner of the key's memory: written once, read after, cleared and freed in `deinit`.
    ///
    /// `@unchecked Sendable`: the bytes never change after `init`, so any thread may read them.
    private final class Storage: @unchecked Sendable {
        /// The key; ours to clear and free.
        let bytes: UnsafeMutableBufferPointer<UInt8>

        init(copying key: UnsafeBufferPointer<UInt8>) {
            bytes = .allocate(capacity: key.count)
            _ = bytes.initialize(fromContentsOf: key)
        }

        deinit {
            // OPENSSL_cleanse, not a loop of zeroes, which the optimiser may drop as a dead store.
            OPENSSL_cleanse(bytes.baseAddress, bytes.count)
            bytes.deallocate()
        }
    }
}
