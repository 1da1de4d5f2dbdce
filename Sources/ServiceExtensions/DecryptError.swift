/// Why a `decrypt` step failed (the original content is then delivered).
///
/// The messages name the problem only: never a byte of the ciphertext, the plaintext or a key.
enum DecryptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field is not a string.
    case fieldNotString(field: String)
    /// The field is not valid base64.
    case malformedBase64(field: String)
    /// Fewer bytes than a nonce and a tag.
    case tooShort(field: String, bytes: Int)
    /// The tag did not verify: a wrong key, or tampered ciphertext, nonce or tag (AES-GCM cannot tell which).
    case authenticationFailed(keyID: String?)
    /// The payload names a key id that is not configured.
    case unknownKeyID(String)
    /// `key-id` is not a string.
    case keyIDNotString
    /// The payload names no key id and no default key (`keyFile`/`keyEnv`) is configured.
    case noDefaultKey
    /// The plaintext is not a JSON object.
    case plaintextNotJSONObject

    var description: String {
        switch self {
        case .fieldNotString(let field):
            "decrypt: \(field) is not a string"
        case .malformedBase64(let field):
            "decrypt: \(field) is not valid base64"
        case .tooShort(let field, let bytes):
            "decrypt: \(field) holds \(bytes) bytes, fewer than a 12-byte nonce and a 16-byte tag"
        case .authenticationFailed(let keyID):
            "decrypt: authentication failed with key \(keyID ?? "(default)"): wrong key or tampered ciphertext"
        case .unknownKeyID(let id):
            "decrypt: key id \(id.prefix(64)) is not configured"
        case .keyIDNotString:
            "decrypt: key-id is not a string"
        case .noDefaultKey:
            "decrypt: the payload names no key-id and no default key (keyFile or keyEnv) is configured"
        case .plaintextNotJSONObject:
            "decrypt: the decrypted plaintext is not a JSON object"
        }
    }
}
