import Dispatcher

/// Why a `decrypt` step failed (the original content is then delivered).
///
/// The messages name the problem only: never a byte of the ciphertext, the plaintext or a key.
enum DecryptError: ServiceExtensionError, Sendable, Hashable, CustomStringConvertible {
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

    /// The failure's kind in log lines.
    var kind: String {
        switch self {
        case .fieldNotString: "decrypt-field-not-string"
        case .malformedBase64: "decrypt-malformed-base64"
        case .tooShort: "decrypt-too-short"
        case .authenticationFailed: "decrypt-authentication-failed"
        case .unknownKeyID: "decrypt-unknown-key-id"
        case .keyIDNotString: "decrypt-key-id-not-string"
        case .noDefaultKey: "decrypt-no-default-key"
        case .plaintextNotJSONObject: "decrypt-plaintext-not-json-object"
        }
    }

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
