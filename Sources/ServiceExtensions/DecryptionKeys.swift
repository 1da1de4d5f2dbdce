import Dispatcher
import Foundation
import JSON
import Notifications
import OpenSSLCrypto

/// The AES-256 keys of a `decrypt` step, read once at start-up: an optional default key
/// (`keyFile` or `keyEnv`) and keys by id (`keys`), so that keys can be rotated without downtime.
struct DecryptionKeys: Sendable {
    /// The key used when the payload names no key id.
    let defaultKey: AESKey?
    /// The keys by id.
    let byID: [String: AESKey]

    /// Reads the keys `options` name.
    /// - Throws: `ExtensionOptionsError` naming the option, the file or variable, and the problem;
    ///   never the key's text.
    init(options: ExtensionOptions, environment: [String: String]) throws(ExtensionOptionsError) {
        let given = Set(options.values.keys)
        if given.contains("keyFile"), given.contains("keyEnv") {
            throw ExtensionOptionsError(key: "keyEnv", "give keyFile or keyEnv, not both")
        }
        if given.contains("keyFile") {
            defaultKey = try Self.readFile(try options.string("keyFile"), option: "keyFile")
        } else if given.contains("keyEnv") {
            defaultKey = try Self.readEnvironment(try options.string("keyEnv"), option: "keyEnv", environment: environment)
        } else {
            defaultKey = nil
        }
        var byID: [String: AESKey] = [:]
        for (id, source) in try options.optionalObject("keys") ?? JSONObject() {
            byID[id] = try Self.read(source, id: id, environment: environment)
        }
        guard defaultKey != nil || !byID.isEmpty else {
            throw ExtensionOptionsError(key: nil, "a decrypt step needs keyFile, keyEnv or keys")
        }
        self.byID = byID
    }

    /// The key for a payload naming `keyID` (nil: the default key).
    func key(for keyID: String?) throws(DecryptError) -> AESKey {
        if let keyID {
            guard let key = byID[keyID] else { throw .unknownKeyID(keyID) }
            return key
        }
        guard let defaultKey else { throw .noDefaultKey }
        return defaultKey
    }

    /// One entry of `keys`: a file path, or `{keyFile: path}` / `{keyEnv: NAME}`.
    private static func read(_ source: JSONValue, id: String, environment: [String: String]) throws(ExtensionOptionsError) -> AESKey {
        if let path = source.stringValue { return try readFile(path, option: "keys") }
        if let object = source.objectValue, object.count == 1 {
            if let path = object["keyFile"]?.stringValue { return try readFile(path, option: "keys") }
            if let name = object["keyEnv"]?.stringValue { return try readEnvironment(name, option: "keys", environment: environment) }
        }
        throw ExtensionOptionsError(
            key: "keys", value: id, "each key id maps to a key file path, {keyFile: path} or {keyEnv: VARIABLE}")
    }

    private static func readFile(_ path: String, option: String) throws(ExtensionOptionsError) -> AESKey {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ExtensionOptionsError(key: option, value: path, "the key file does not exist")
        }
        guard !isDirectory.boolValue, FileManager.default.isReadableFile(atPath: path),
            let data = try? Data(contentsOf: URL(fileURLWithPath: path))
        else {
            throw ExtensionOptionsError(key: option, value: path, "the key file cannot be read")
        }
        guard let key = parse(data) else {
            throw ExtensionOptionsError(key: option, value: path, "the key file does not hold base64 of a 256-bit (32-byte) key")
        }
        return key
    }

    private static func readEnvironment(_ name: String, option: String, environment: [String: String]) throws(ExtensionOptionsError) -> AESKey {
        guard let text = environment[name] else {
            throw ExtensionOptionsError(key: option, value: name, "the environment variable is not set")
        }
        guard let key = parse(Data(text.utf8)) else {
            throw ExtensionOptionsError(key: option, value: name, "the environment variable does not hold base64 of a 256-bit (32-byte) key")
        }
        return key
    }

    /// The key in `data` (base64, surrounding whitespace ignored); nil unless it decodes to 32 bytes.
    private static func parse(_ data: Data) -> AESKey? {
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        // 32 bytes only, though AESKey takes 16 and 24 too: the step is AES-256-GCM.
        guard let bytes = Data(base64Encoded: text), bytes.count == 32 else { return nil }
        return try? AESKey(bytes)
    }
}
