import COpenSSLDigest

/// The one owner of an `EVP_MD_CTX` set up for SHA-256: created initialised, freed in `deinit`.
///
/// `@unchecked Sendable`: ``SHA256``, the only user, changes a context only after checking that
/// it holds the only reference to it (copy on write), so a context one value changes is never
/// shared; shared contexts are only read (``copy()``), which OpenSSL allows from any thread.
final class DigestContext: @unchecked Sendable {
    /// The context; ours to free.
    private let context: OpaquePointer

    /// A context ready to hash, or nil if OpenSSL cannot make one (out of memory).
    init?() {
        guard let context = EVP_MD_CTX_new() else { return nil }
        guard EVP_DigestInit_ex(context, FetchedAlgorithms.sha256.pointer, nil) == 1 else {
            EVP_MD_CTX_free(context)
            return nil
        }
        self.context = context
    }

    /// A context holding `other`'s state, or nil if OpenSSL cannot make one.
    private init?(copying other: OpaquePointer) {
        guard let context = EVP_MD_CTX_new() else { return nil }
        guard EVP_MD_CTX_copy_ex(context, other) == 1 else {
            EVP_MD_CTX_free(context)
            return nil
        }
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// A new context in the same state as this one, which is left as it is.
    func copy() -> DigestContext? {
        DigestContext(copying: context)
    }

    /// Hashes `bytes` on; false if OpenSSL refused.
    func update(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // The pointer of an empty buffer may be nil; OpenSSL returns at once for a count of 0.
        bytes.isEmpty || EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1
    }

    /// Writes the digest into `digest`, which must hold exactly the digest's size (32 bytes);
    /// the context hashes nothing more after it. False if OpenSSL refused.
    func finalize(into digest: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        // OpenSSL writes the whole digest, whatever the buffer's size.
        precondition(digest.count == EVP_MD_get_size(FetchedAlgorithms.sha256.pointer), "a SHA-256 digest is 32 bytes")
        var size: UInt32 = 0
        return EVP_DigestFinal_ex(context, digest.baseAddress, &size) == 1 && Int(size) == digest.count
    }
}
