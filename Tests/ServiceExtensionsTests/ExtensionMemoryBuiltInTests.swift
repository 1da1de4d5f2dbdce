import Dispatcher
import Foundation
import HTTPServer
import JSON
import Notifications
import OpenSSLCrypto
import ServiceExtensions
import Testing
import TestSupport

/// SEMANTICS section 22 for the built-in kinds against real loopback servers: a webhook's body
/// counts as it is read (and reading stops as soon as it passes what the chain may hold), a
/// decrypted plaintext counts, a download holds its buffer. What the worker holds is measured:
/// the bytes the client read, and those the server managed to send, against a body of 1 GiB.
@Suite("The service extension's memory: webhook, decrypt, attachment")
struct ExtensionMemoryBuiltInTests {
    /// The body the oversized webhooks answer with: 1 GiB, far above any limit here.
    static let hugeBody = 1 << 30
    /// The chain's limit in these tests.
    static let limit = 256 * 1024
    /// What the client may read past the cap: the chunk that passes it (NIO reads at most 64 KiB
    /// at a time), with the chunked framing.
    static let oneRead = 64 * 1024 + 64
    /// What the server may send beyond what the client read: both sockets' buffers on loopback
    /// (Linux grows them up to tcp_wmem's and tcp_rmem's maxima, 4 MiB and 6 MiB by default).
    static let socketBuffers = 16 << 20

    /// One webhook step named `hook` calling `url`, under ``limit``.
    static func webhookYAML(_ url: String, before: String = "") -> String {
        """
        http:
          livenessLimit: 10m
        dispatch:
          deadline: 5m
          extensionMemoryLimit: \(limit)
        apps:
          \(Support.bundleID):
            serviceExtension:
        \(before)
              - {kind: webhook, name: hook, url: "\(url)"}
        """
    }

    @Test(
        "a webhook answering with a body over the limit ends the notification's extension, not the worker: reading stops near the limit",
        .timeLimit(.minutes(2)), arguments: [false, true])
    func oversizedBody(announced: Bool) async throws {
        let server = try await StreamingBodyServer(bodyBytes: Self.hugeBody, announced: announced)
        let result: DispatchResult
        do {
            result = try await Support.dispatch(Self.webhookYAML(server.url), payload: Support.alertPayload())
        } catch {
            await server.stop()
            throw error
        }
        // The connection is closed by the client when it stops reading: wait for the server to see it.
        let closed = await Self.waitUntil { server.counters.closedConnections == 1 }
        await server.stop()
        #expect(closed, "the client did not close the connection")
        #expect(server.counters.requests == 1)
        #expect(result.disposition == .original)
        #expect(result.reason == .extensionMemoryLimit)
        #expect(result.delivery?.extensionReport?.expired == false)
        let stop = try #require(result.delivery?.extensionReport?.memoryStop)
        #expect(stop.step == "hook")
        #expect(stop.limitBytes == Self.limit)
        let content = JSONValue.object(Support.alertPayload()).serialized().count
        if announced {
            // The Content-Length alone passes what the chain may hold: refused at the head, nothing read.
            #expect(stop.heldBytes == content + Self.hugeBody)
        } else {
            // Read up to the chunk that passed the limit, not one read more.
            #expect(stop.heldBytes > Self.limit)
            #expect(stop.heldBytes <= Self.limit + Self.oneRead, "read \(stop.heldBytes) bytes")
        }
        // What the server could send before the close: the sockets' buffers at most, not the gigabyte.
        let sent = server.counters.bodyBytesSent
        #expect(sent <= Self.limit + Self.socketBuffers, "the server sent \(sent) bytes of \(Self.hugeBody)")
    }

    @Test("a body within what the chain may hold is read whole and delivered; the same body past it stops the chain")
    func bodyAgainstWhatIsLeft() async throws {
        let big = String(repeating: "x", count: 100_000)
        let answer = JSONValue.object(["payload": .object(Support.alertPayload([("inline", .string(big))]))]).compactText
        let server = try await ScriptedHTTPServer { _ in .respond(body: answer) }
        do {
            try await Self.againstWhatIsLeft(server, big: big)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// The checks of ``bodyAgainstWhatIsLeft()`` against `server`, answering with `big` inline.
    private static func againstWhatIsLeft(_ server: ScriptedHTTPServer, big: String) async throws {
        let fits = try await Support.dispatch(webhookYAML(server.baseURL), payload: Support.alertPayload())
        #expect(fits.reason == .extension)
        #expect(fits.deliveredPayload?["inline"] == .string(big))
        // Two steps whose content (about 69 KB) leaves less than the answer's 100 KB: the third step's body passes it.
        let filler = String(repeating: "f", count: 3_000)
        let before = """
                  - {kind: rewrite, name: pad, set: {a: "{{ filler }}", b: "{{ filler }}"}}
                  - {kind: rewrite, name: grow, set: {c: ["{{ a }}{{ b }}", "{{ a }}{{ b }}", "{{ a }}{{ b }}", "{{ a }}{{ b }}", "{{ a }}{{ b }}"], d: ["{{ a }}{{ b }}", "{{ a }}{{ b }}", "{{ a }}{{ b }}", "{{ a }}{{ b }}", "{{ a }}{{ b }}"]}}
            """
        let yaml = webhookYAML(server.baseURL, before: before).replacingOccurrences(
            of: "extensionMemoryLimit: \(limit)", with: "extensionMemoryLimit: 140KiB")
        let third = try await Support.dispatch(yaml, payload: Support.alertPayload([("filler", .string(filler))]))
        #expect(third.reason == .extensionMemoryLimit)
        #expect(third.extensionName == "pad+grow+hook")
        let stop = try #require(third.delivery?.extensionReport?.memoryStop)
        #expect(stop.step == "hook")
        #expect(stop.heldBytes > 140 * 1024)
    }

    @Test("a decrypted plaintext counts: one that does not fit beside its content stops the chain")
    func decryptedPlaintext() async throws {
        let keys = try DecryptTests.KeyFiles()
        defer { keys.cleanUp() }
        let key = try AESKey(try #require(Data(base64Encoded: DecryptFixtures.keys["default"]!)))
        let secret = JSONValue.object(["aps": ["alert": ["body": "secret"]], "notes": .string(String(repeating: "n", count: 2_000))])
        let sealed = try AESGCM.seal(secret.serialized(), using: key)
        let payload = Support.alertPayload([("encrypted", .string(Data(sealed).base64EncodedString()))])
        let content = JSONValue.object(payload).serialized().count
        let plaintext = secret.serialized().count
        try #require(content < 4_096, "the payload must fit APNs's limit: \(content) bytes")
        func decrypt(limit: Int) async throws -> DispatchResult {
            let yaml = Support.yaml(steps: keys.step).replacingOccurrences(of: "dispatch:\n", with: "dispatch:\n  extensionMemoryLimit: \(limit)\n")
            return try await Support.dispatch(yaml, payload: payload)
        }
        let stopped = try await decrypt(limit: content + plaintext - 1)
        #expect(stopped.reason == .extensionMemoryLimit)
        #expect(stopped.delivery?.extensionReport?.memoryStop?.heldBytes == content + plaintext)
        let decrypted = try await decrypt(limit: content + plaintext + 4_000)
        #expect(decrypted.reason == .extension)
        #expect(decrypted.deliveredPayload?["notes"]?.stringValue?.count == 2_000)
    }

    @Test("a download holds its 256 KiB buffer: under a smaller limit the chain stops before anything is fetched")
    func downloadBuffer() async throws {
        let store = Support.temporaryDirectory("store")
        defer { try? FileManager.default.removeItem(at: store) }
        try await MediaServer.withServer({ router, _ in
            router.get("media/photo.jpg") { _ in MediaServer.media(MediaSamples.jpeg, contentType: "image/jpeg") }
        }) { port, counters in
            let payload = Support.alertPayload([("media-url", .string("http://127.0.0.1:\(port)/media/photo.jpg"))])
            func run(limit: String) async throws -> DispatchResult {
                let yaml = Support.yaml(steps: AttachmentDownloadTests.attachmentStep(store: store))
                    .replacingOccurrences(of: "dispatch:\n", with: "dispatch:\n  extensionMemoryLimit: \(limit)\n")
                return try await Support.dispatch(yaml, payload: payload)
            }
            let stopped = try await run(limit: "200KiB")
            #expect(stopped.reason == .extensionMemoryLimit)
            #expect(stopped.delivery?.extensionReport?.memoryStop?.step == "attachment")
            #expect(counters.requests.isEmpty, "\(counters.requests)")
            // A 50 MB video or a 10 KB image: a download holds the same buffer, so 300 KiB is enough.
            let downloaded = try await run(limit: "300KiB")
            #expect(downloaded.reason == .extension, "\(downloaded.extensionFailure ?? "")")
            #expect(counters.requests == ["/media/photo.jpg"])
        }
    }

    /// Waits (up to 20 s, checking every 10 ms) for `condition`.
    static func waitUntil(_ condition: () -> Bool) async -> Bool {
        let end = ContinuousClock.now + .seconds(20)
        while !condition() {
            guard ContinuousClock.now < end else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }
}
