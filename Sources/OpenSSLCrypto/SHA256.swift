import COpenSSLDigest

/// SHA-256 (FIPS 180-4), by OpenSSL's libcrypto: a value that hashes bytes as they come
/// (``update(_:)``, then ``finalize()``), or all at once (``hash(_:)``).
///
/// A value: a copy hashes on from where the original was, independently of it (the context is
/// copied on the first change to a shared one).
package struct SHA256: Sendable {
    /// The size of a digest in bytes.
    package static let byteCount = 32

    /// The running hash, shared between copies until one changes.
    private var context: DigestContext

    /// A hash of no bytes yet.
    package init() {
        context = Self.makeContext()
    }

    /// The digest of `bytes`, 32 bytes.
    package static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        if let digest = bytes.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(bytes).withUnsafeBytes(hash)
    }

    /// Hashes `bytes` on.
    package mutating func update(_ bytes: some Sequence<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ update(raw: UnsafeRawBufferPointer($0)) }) == nil {
            Array(bytes).withUnsafeBytes { update(raw: $0) }
        }
    }

    /// The digest of every byte given so far, 32 bytes. The value ends here: a copy still
    /// hashes on.
    package consuming func finalize() -> [UInt8] {
        // Finalising spends the context: a shared one is copied first, so its other holders keep theirs.
        makeContextUnique()
        return [UInt8](unsafeUninitializedCapacity: Self.byteCount) { digest, count in
            Self.check(context.finalize(into: digest))
            count = Self.byteCount
        }
    }

    /// The digest of `bytes` in one call (`EVP_Digest`, which sets a context up and frees it).
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { digest, count in
            var size: UInt32 = 0
            let status = EVP_Digest(bytes.baseAddress, bytes.count, digest.baseAddress, &size, FetchedAlgorithms.sha256.pointer, nil)
            check(status == 1 && Int(size) == byteCount)
            count = byteCount
        }
    }

    private mutating func update(raw bytes: UnsafeRawBufferPointer) {
        makeContextUnique()
        Self.check(context.update(bytes))
    }

    /// Makes `context` this value's own before it changes.
    private mutating func makeContextUnique() {
        if !isKnownUniquelyReferenced(&context) {
            context = Self.check(context.copy())
        }
    }

    private static func makeContext() -> DigestContext {
        check(DigestContext())
    }

    /// `context`, which is nil only where OpenSSL could not set one up.
    private static func check(_ context: DigestContext?) -> DigestContext {
        guard let context else { preconditionFailure("OpenSSL could not set a SHA-256 context up (out of memory, or no SHA-256 in libcrypto)") }
        return context
    }

    /// Stops the process if OpenSSL refused: SHA-256 fails only without memory or without libcrypto's
    /// SHA-256, never because of the bytes hashed.
    private static func check(_ succeeded: Bool) {
        precondition(succeeded, "OpenSSL's SHA-256 failed (out of memory, or no SHA-256 in libcrypto)")
    }
}
