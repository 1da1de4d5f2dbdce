import Foundation
import HTTPServer
import JSON
import NIOCore
import NIOHTTP1
import Notifications
import OpenSSLCrypto
import Synchronization
import Testing
import TestSupport

/// A `decrypt` then `attachment` chain through the built binary's `dispatch` command: the media
/// URL is itself inside the encrypted part, so the attachment step only sees it after decryption.
@Suite struct DispatchCommandChainTests {
    /// The provider script of the worked example (docs/extensions.md), which encrypts as a provider does.
    static let providerScript = BuiltBinary.packageRoot().appendingPathComponent("Config/examples/encrypt_payload.py")

    /// The paths the media server was asked for, in order.
    final class RequestedPaths: Sendable {
        let paths = Mutex<[String]>([])
    }

    @Test(.enabled(if: Executable.isInstalled("python3"), "encrypts with the provider script, run by python3"))
    func decryptThenAttachmentThroughTheDispatchCommand() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("nd-chain-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        // An AES-256 key, base64, as the provider and the `decrypt` step read it from a file.
        let keyFile = work.appendingPathComponent("push.key")
        try Data((Data(0..<32).base64EncodedString() + "\n").utf8).write(to: keyFile)
        let store = work.appendingPathComponent("media")

        let requested = RequestedPaths()
        var router = Router()
        router.get("cover.jpg") { request in
            requested.paths.withLock { $0.append(String(request.path)) }
            return Response(
                status: .ok, headers: ["content-type": "image/jpeg"],
                body: ByteBuffer(bytes: MediaSamples.jpeg))
        }
        try await LoopbackServer.with(router) { baseURL in
            let secret = """
                {"aps": {"alert": {"title": "Your order shipped", "body": "Arrives Tuesday"}}, \
                "media-url": "\(baseURL)/cover.jpg", "orderId": 4711}
                """
            let encrypted = try await ProgramRun.run(
                Executable.require("python3"),
                [Self.providerScript.path, "--key-file", keyFile.path, "--key-id", "2026-11", secret])
            #expect(encrypted.status == 0, "\(encrypted.standardError)")
            let fields = try #require(try JSONValue(parsing: Array(encrypted.standardOutput.utf8)).objectValue)

            let config = work.appendingPathComponent("dispatcher.yaml")
            // A deadline the chain cannot reach (and a liveness limit above it, as the configuration
            // requires): the test is about what the chain does, and beside CPU hogs the decryption
            // and the download took longer than 10 s.
            try Data("""
                http:
                  livenessLimit: 10m
                dispatch:
                  deadline: 5m
                apps:
                  com.example.shop:
                    serviceExtension:
                      - kind: decrypt
                        keys:
                          "2026-11": \(keyFile.path)
                      - kind: attachment
                        name: cover
                        store: \(store.path)
                        allowHosts: [127.0.0.0/8]

                """.utf8).write(to: config)
            var value = JSONObject([("aps", ["alert": "You have a message", "mutable-content": 1])])
            for (key, field) in fields { value[key] = field }
            let line = JSONValue.object(JSONObject([
                ("key", .string(String(repeating: "01", count: 32))),
                ("headers", ["apns-topic": "com.example.shop", "apns-push-type": "alert"]),
                ("value", .object(value)),
            ])).compactText
            let input = work.appendingPathComponent("requests.jsonl")
            try Data((line + "\n").utf8).write(to: input)

            let run = try await BuiltBinary.run(["dispatch", "--config", config.path, "--input", input.path])
            #expect(run.status == 0, "\(run.standardError)")
            let records = run.standardOutput.split(separator: "\n")
            let record = try #require(try JSONValue(parsing: Array((records.first ?? "").utf8)).objectValue)
            #expect(record["topic"] == "notifications.deliveries")
            let delivery = try #require(record["value"]?.objectValue)
            #expect(delivery["disposition"] == "modified")
            #expect(delivery["reason"] == "extension")
            #expect(delivery["extension"]?.objectValue?["name"] == "decrypt+cover")
            let payload = try #require(delivery["payload"]?.objectValue)
            #expect(payload["aps"]?.objectValue?["alert"] == ["title": "Your order shipped", "body": "Arrives Tuesday"])
            #expect(payload["orderId"] == 4711)
            #expect(payload["encrypted"] == nil)
            #expect(payload["key-id"] == nil)
            let attachments = try #require(delivery["attachments"]?.arrayValue)
            #expect(attachments.count == 1)
            let attachment = try #require(attachments.first?.objectValue)
            #expect(attachment["identifier"] == "cover")
            #expect(attachment["type"] == "public.jpeg")
            #expect(attachment["size"] == .number(JSONNumber(MediaSamples.jpeg.count)))
            #expect(attachment["sha256"] == .string(SHA256.hash(MediaSamples.jpeg).map { String(format: "%02x", $0) }.joined()))
            let file = try #require(attachment["url"]?.stringValue.flatMap(URL.init(string:)))
            #expect(try Data(contentsOf: file) == Data(MediaSamples.jpeg))
            #expect(requested.paths.withLock { $0 } == ["/cover.jpg"])
        }
    }

    @Test func theWorkedExampleStartsWithItsDemoKey() async throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("nd-empty-input-\(UUID().uuidString)")
        try Data().write(to: empty)
        defer { try? FileManager.default.removeItem(at: empty) }
        // Run from the repository root, as the example says: its key file path is relative.
        let run = try await BuiltBinary.run(
            ["dispatch", "--config", "Config/examples/rich-media.yaml", "--input", empty.path], in: BuiltBinary.packageRoot())
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.isEmpty)
    }
}
