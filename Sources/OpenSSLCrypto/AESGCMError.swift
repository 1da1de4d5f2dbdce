/// Why ``AESGCM`` or ``AESKey`` refused.
///
/// Nothing in it comes from the data: a message built from it shows no byte of a key, a nonce,
/// a plaintext or a ciphertext.
package enum AESGCMError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A key of this many bytes: AES takes 16, 24 or 32.
    case invalidKeySize(Int)
    /// A nonce of this many bytes: the combined form has 12.
    case invalidNonceSize(Int)
    /// A combined input of this many bytes, fewer than a nonce and a tag (28).
    case inputTooShort(Int)
    /// The tag did not verify: a wrong key, or a changed nonce, ciphertext or tag. GCM cannot
    /// tell which, and neither does this.
    case authenticationFailed
    /// OpenSSL refused a call for a reason of its own (out of memory, no AES-GCM in libcrypto,
    /// no randomness for a nonce).
    case libraryFailure

    package var description: String {
        switch self {
        case .invalidKeySize(let bytes): "AES-GCM: a key of \(bytes) bytes (16, 24 or 32 expected)"
        case .invalidNonceSize(let bytes): "AES-GCM: a nonce of \(bytes) bytes (12 expected)"
        case .inputTooShort(let bytes): "AES-GCM: \(bytes) bytes, fewer than a 12-byte nonce and a 16-byte tag"
        case .authenticationFailed: "AES-GCM: authentication failed (wrong key or changed data)"
        case .libraryFailure: "AES-GCM: OpenSSL's libcrypto failed"
        }
    }
}
