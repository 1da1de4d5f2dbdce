import COpenSSLDigest

/// The algorithms this module uses, each fetched from OpenSSL's default provider once for the
/// process and kept for its life.
///
/// OpenSSL 3 looks an algorithm up in its provider store whenever a context is set up with the
/// built-in `EVP_sha256()` or `EVP_aes_256_gcm()` and the like (an implicit fetch, under a lock);
/// fetched once, SHA-256 of 100 bytes took 445 ns here against 1,106 ns, and AES-256-GCM of them
/// 1,073 ns against 2,015 ns. A fetch fails only where the default provider is not loaded (a FIPS
/// configuration without it, say): then the built-in is used, and fetched per use as before.
enum FetchedAlgorithms {
    /// SHA-256.
    static let sha256 = FetchedAlgorithm(EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256())
    /// AES-128 in GCM mode.
    static let aes128GCM = FetchedAlgorithm(EVP_CIPHER_fetch(nil, "AES-128-GCM", nil) ?? EVP_aes_128_gcm())
    /// AES-192 in GCM mode.
    static let aes192GCM = FetchedAlgorithm(EVP_CIPHER_fetch(nil, "AES-192-GCM", nil) ?? EVP_aes_192_gcm())
    /// AES-256 in GCM mode.
    static let aes256GCM = FetchedAlgorithm(EVP_CIPHER_fetch(nil, "AES-256-GCM", nil) ?? EVP_aes_256_gcm())
}

/// An `EVP_MD` or `EVP_CIPHER`, held for the life of the process (never freed: a static's value).
///
/// `@unchecked Sendable`: OpenSSL's algorithm objects are immutable once fetched and may be used
/// by any number of threads at once (openssl-threads(7)); this only lends the pointer.
struct FetchedAlgorithm: @unchecked Sendable {
    /// The algorithm; nil only if even the built-in was unavailable, which OpenSSL 3 never does.
    let pointer: OpaquePointer?

    init(_ pointer: OpaquePointer?) {
        self.pointer = pointer
    }
}
