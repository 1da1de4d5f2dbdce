import Dispatcher
import Foundation
import JSON
import Notifications
import OpenSSLCrypto
import ServiceExtensions
import Testing
import TestSupport

/// The `decrypt` kind against records encrypted by an independent implementation (Python's
/// `cryptography`): committed fixtures, and records made on the spot by the provider script.
@Suite struct DecryptTests {
    /// A directory holding the fixture keys as key files, removed by `cleanUp`.
    struct KeyFiles {
        let directory: URL

        init(keys: [String: String] = DecryptFixtures.keys) throws {
            directory = Support.temporaryDirectory("keys")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for (name, key) in keys {
                try Data((key + "\n").utf8).write(to: path(name))
            }
        }

        func path(_ name: String) -> URL { directory.appendingPathComponent("\(name).key") }

        func cleanUp() { try? FileManager.default.removeItem(at: directory) }

        /// A decrypt step with the default key and the two rotated keys by id.
        var step: String {
            """
                  kind: decrypt
                  keyFile: \(path("default").path)
                  keys:
                    "2026-10": \(path("2026-10").path)
                    "2026-11": {keyFile: \(path("2026-11").path)}
            """
        }
    }

    /// A payload carrying `encrypted` (and `keyID` when the key is not the default one).
    static func payload(encrypted: String, keyID: String?) -> JSONObject {
        var extra: [(String, JSONValue)] = [("encrypted", .string(encrypted)), ("trace", "kept")]
        if let keyID { extra.append(("key-id", .string(keyID))) }
        return Support.alertPayload(extra)
    }

    /// What decrypting `payload` must give: the secret deep-merged, the envelope keys gone.
    static func expected(_ payload: JSONObject, secretJSON: String) throws -> JSONObject {
        var result = payload
        result.removeValue(forKey: "encrypted")
        result.removeValue(forKey: "key-id")
        let secret = try #require(try JSONValue(parsing: Array(secretJSON.utf8)).objectValue)
        result.merge(secret)
        return result
    }

    @Test(arguments: DecryptFixtures.records.map { ($0.name, $0.key) })
    func committedFixturesDecryptAndMergeWithEveryKey(name: String, key: String) async throws {
        let record = try #require(DecryptFixtures.records.first { $0.name == name && $0.key == key })
        let keys = try KeyFiles()
        defer { keys.cleanUp() }
        let payload = Self.payload(encrypted: record.encrypted, keyID: key == "default" ? nil : key)
        let result = try await Support.dispatch(Support.yaml(steps: keys.step), payload: payload)
        #expect(result.reason == .extension, "\(result.extensionFailure ?? "")")
        #expect(result.deliveredPayload == (try Self.expected(payload, secretJSON: record.secretJSON)))
    }

    @Test func theDeepMergeKeepsTheAlertKeysTheSecretDoesNotSet() async throws {
        let record = try #require(DecryptFixtures.records.first { $0.name == "unicodeAndNesting" && $0.key == "default" })
        let keys = try KeyFiles()
        defer { keys.cleanUp() }
        let payload = Self.payload(encrypted: record.encrypted, keyID: nil)
        let result = try await Support.dispatch(Support.yaml(steps: keys.step), payload: payload)
        let aps = try #require(result.deliveredPayload?["aps"]?.objectValue)
        #expect(aps["alert"] == ["title": "Hello", "body": "World", "subtitle": "Grüße 👋"])
        #expect(aps["thread-id"] == "t-1")
        #expect(aps["mutable-content"] == 1)
        #expect(result.deliveredPayload?["encrypted"] == nil)
        #expect(result.deliveredPayload?["trace"] == "kept")
    }

    @Test(.enabled(if: Executable.isInstalled("python3"), "runs the provider script with python3"))
    func recordsMadeNowByTheProviderScriptDecrypt() async throws {
        let keys = try KeyFiles()
        defer { keys.cleanUp() }
        let secret = #"{"aps": {"alert": {"title": "Made by Python", "body": "just now"}}, "deep": {"a": [1, 2.50, "x"]}}"#
        for keyID in [nil, "2026-11"] {
            var arguments = [Self.providerScript.path, "--key-file", keys.path(keyID ?? "default").path]
            if let keyID { arguments += ["--key-id", keyID] }
            let output = try await ProgramRun.run(Executable.require("python3"), arguments + [secret])
            #expect(output.status == 0, "\(output.standardError)")
            let fields = try #require(try JSONValue(parsing: Array(output.standardOutput.utf8)).objectValue)
            #expect(fields["key-id"]?.stringValue == keyID)
            var payload = Support.alertPayload()
            for (key, value) in fields { payload[key] = value }
            let result = try await Support.dispatch(Support.yaml(steps: keys.step), payload: payload)
            #expect(result.reason == .extension, "\(result.extensionFailure ?? "")")
            #expect(result.deliveredPayload == (try Self.expected(payload, secretJSON: secret)))
        }
    }

    /// Ways a record can be unusable; each fails the step without a word of the secret.
    @Test(arguments: [
        ("tampered ciphertext", "tamper", "authentication failed"),
        ("wrong key", "wrong-key", "authentication failed"),
        ("rotated-out key id", "unknown-id", "key id 2025-01 is not configured"),
        ("bad base64", "bad-base64", "not valid base64"),
        ("too short", "short", "fewer than a 12-byte nonce"),
        ("not a string", "number", "is not a string"),
        ("not JSON inside", "not-json", "plaintext is not a JSON object"),
    ])
    func unusableRecordsFailCleanly(label: String, mutation: String, detail: String) async throws {
        let record = try #require(DecryptFixtures.records.first { $0.name == "alertAndCustomKeys" && $0.key == "default" })
        let keys = try KeyFiles()
        defer { keys.cleanUp() }
        var payload = Self.payload(encrypted: record.encrypted, keyID: nil)
        switch mutation {
        case "tamper":
            var bytes = try #require(Data(base64Encoded: record.encrypted))
            bytes[20] ^= 0x01
            payload["encrypted"] = .string(bytes.base64EncodedString())
        case "wrong-key":
            payload["key-id"] = "2026-10"
        case "unknown-id":
            payload["key-id"] = "2025-01"
        case "bad-base64":
            payload["encrypted"] = .string("%%%" + record.encrypted)
        case "short":
            payload["encrypted"] = .string(Data(repeating: 7, count: 27).base64EncodedString())
        case "number":
            payload["encrypted"] = 42
        default:
            payload["encrypted"] = .string(try Self.encrypt(keyFile: keys.path("default"), plaintext: "not json, secret words"))
        }
        let result = try await Support.dispatch(Support.yaml(steps: keys.step), payload: payload)
        #expect(result.reason == .extensionFailed)
        #expect(result.deliveredPayload == payload)
        let failure = try #require(result.extensionFailure)
        #expect(failure.contains(detail), "\(failure)")
        for secret in ["Your order shipped", "Parcel", "4711", "secret words", DecryptFixtures.keys["default"] ?? "?"] {
            #expect(!failure.contains(secret))
        }
    }

    @Test func aPayloadWithoutTheFieldPassesUnchanged() async throws {
        let keys = try KeyFiles()
        defer { keys.cleanUp() }
        let payload = Support.alertPayload([("key-id", "2026-11")])
        let result = try await Support.dispatch(Support.yaml(steps: keys.step), payload: payload)
        #expect(result.reason == .extensionUnchanged)
        #expect(result.deliveredPayload == payload)
    }

    @Test func keysComeFromTheEnvironmentAndACustomField() async throws {
        let record = try #require(DecryptFixtures.records.first { $0.name == "alertAndCustomKeys" && $0.key == "2026-11" })
        let steps = """
                  kind: decrypt
                  field: secret
                  keyEnv: PUSH_KEY
            """
        var payload = Support.alertPayload([("secret", .string(record.encrypted))])
        let environment = ["PUSH_KEY": DecryptFixtures.keys["2026-11"] ?? ""]
        let result = try await Support.dispatch(Support.yaml(steps: steps), payload: payload, environment: environment)
        #expect(result.reason == .extension, "\(result.extensionFailure ?? "")")
        payload.removeValue(forKey: "secret")
        #expect(result.deliveredPayload == (try Self.expected(payload, secretJSON: record.secretJSON)))
    }

    @Test func missingOrInvalidKeysStopStartUpWithoutShowingTheKey() async throws {
        let keys = try KeyFiles(keys: ["short": "AAEC", "text": "not base64 at all!", "good": DecryptFixtures.keys["default"] ?? ""])
        defer { keys.cleanUp() }
        let step = #"apps["com.example.app"].serviceExtension"#
        let cases: [(lines: String, path: String, environment: [String: String])] = [
            ("keyFile: \(keys.path("absent").path)", "\(step).keyFile", [:]),
            ("keyFile: \(keys.path("short").path)", "\(step).keyFile", [:]),
            ("keyFile: \(keys.path("text").path)", "\(step).keyFile", [:]),
            ("keyEnv: NOT_SET", "\(step).keyEnv", [:]),
            ("keyEnv: SHORT_KEY", "\(step).keyEnv", ["SHORT_KEY": "AAEC"]),
            ("keys: {a: \(keys.path("absent").path)}", "\(step).keys", [:]),
            ("keys: {a: [1]}", "\(step).keys", [:]),
            ("field: encrypted", step, [:]),
            ("keyFile: \(keys.path("good").path)\n      keyEnv: X", "\(step).keyEnv", ["X": DecryptFixtures.keys["default"] ?? ""]),
        ]
        for entry in cases {
            let yaml = Support.yaml(steps: "      kind: decrypt\n      \(entry.lines)")
            let error = try #require(try await Support.startUpError(yaml, environment: entry.environment), "\(entry.lines)")
            #expect(error.code == .invalidExtensionOptions)
            #expect(error.path == entry.path, "\(entry.lines)")
            #expect(!error.description.contains("AAEC"))
            #expect(!error.description.contains(DecryptFixtures.keys["default"] ?? "?"))
        }
    }

    /// The provider script (the worked example's).
    static let providerScript = BuiltBinary.packageRoot().appendingPathComponent("Config/examples/encrypt_payload.py")

    /// Encrypts arbitrary plaintext bytes as a provider with a bug might (with OpenSSLCrypto: the
    /// provider script's own output is checked against Python in `recordsMadeNowByTheProviderScriptDecrypt`).
    static func encrypt(keyFile: URL, plaintext: String) throws -> String {
        let keyText = try String(contentsOf: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let key = try AESKey(try #require(Data(base64Encoded: keyText)))
        return Data(try AESGCM.seal(plaintext.utf8, using: key)).base64EncodedString()
    }
}

extension JSONObject {
    /// Deep merge for expectations, written independently of the extension's.
    fileprivate mutating func merge(_ other: JSONObject) {
        for (key, value) in other {
            if case .object(let mine) = self[key], case .object(let theirs) = value {
                var merged = mine
                merged.merge(theirs)
                self[key] = .object(merged)
            } else {
                self[key] = value
            }
        }
    }
}
