import Dispatcher
import Foundation
import JSON
import Notifications
import OpenSSLCrypto

/// The built-in `decrypt` kind (end-to-end encryption): the payload's `field` holds base64 of
/// AES-256-GCM `nonce (12) | ciphertext | tag (16)`; the plaintext, a JSON object, is deep-merged
/// into the payload, and the field and `key-id` are removed.
struct DecryptExtension: ServiceExtension {
    /// The payload key that names the key id.
    static let keyIDField = "key-id"

    /// The payload key holding the ciphertext.
    let field: String
    /// The keys, read at start-up.
    let keys: DecryptionKeys

    /// The option keys a `decrypt` step accepts.
    static let optionKeys = ["field", "keyFile", "keyEnv", "keys"]

    /// Checks `options` and reads the keys they name.
    init(options: ExtensionOptions, environment: [String: String]) throws(ExtensionOptionsError) {
        try options.rejectUnknownKeys(allowed: Self.optionKeys)
        let field = options.values.keys.contains("field") ? try options.string("field") : "encrypted"
        guard !field.isEmpty else { throw ExtensionOptionsError(key: "field", value: field, "expected a payload key") }
        self.field = field
        self.keys = try DecryptionKeys(options: options, environment: environment)
    }

    func didReceive(_ request: ServiceExtensionRequest) async throws -> NotificationContent {
        var content = request.content
        guard let value = content.payload[field] else { return content }
        content.payload = try decrypt(value, in: content.payload, memory: request.memory)
        return content
    }

    /// `payload` with the plaintext of `value` merged in and the envelope keys removed; the
    /// plaintext counts towards `memory` (SEMANTICS section 22) from the moment it is decrypted.
    func decrypt(_ value: JSONValue, in payload: JSONObject, memory: ExtensionMemory? = nil) throws -> JSONObject {
        let plaintext = try open(value, in: payload)
        try memory?.hold(plaintext.count)
        return try merge(plaintext, into: payload)
    }

    /// The plaintext of `value`, the field of `payload` named by ``field``.
    private func open(_ value: JSONValue, in payload: JSONObject) throws(DecryptError) -> [UInt8] {
        guard let text = value.stringValue else { throw .fieldNotString(field: field) }
        let keyID: String?
        switch payload[Self.keyIDField] {
        case nil: keyID = nil
        case .string(let id): keyID = id
        case .some: throw .keyIDNotString
        }
        let key = try keys.key(for: keyID)
        // Line breaks and spaces are allowed, as wrapped base64 has them; nothing else is.
        let compact = text.filter { !" \n\r\t".contains($0) }
        guard let combined = Data(base64Encoded: compact) else { throw .malformedBase64(field: field) }
        guard combined.count >= 12 + 16 else { throw .tooShort(field: field, bytes: combined.count) }
        do {
            return try AESGCM.open(combined: combined, using: key)
        } catch {
            // AESGCMError says nothing secret, but one message for all keeps tampering and a
            // wrong key indistinguishable, as they are.
            throw .authenticationFailed(keyID: keyID)
        }
    }

    /// `payload` with `plaintext`, a JSON object, deep-merged into it, and the envelope keys removed.
    private func merge(_ plaintext: [UInt8], into payload: JSONObject) throws(DecryptError) -> JSONObject {
        guard let object = (try? JSONValue(parsing: plaintext))?.objectValue else { throw .plaintextNotJSONObject }
        var result = payload
        result.removeValue(forKey: field)
        result.removeValue(forKey: Self.keyIDField)
        result.deepMerge(object)
        return result
    }
}
