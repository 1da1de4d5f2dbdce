import Dispatcher
import Foundation
import HTTPServer
import JSON
import NIOCore
import NIOHTTP1
import Notifications
import OpenSSLCrypto
import Testing
import TestSupport
import WebhookHTTP

@testable import ServiceExtensions

/// Downloads stream to disk through a buffer of fixed size, and the store keeps to its retention.
@Suite struct AttachmentStoreTests {
    /// A fresh, existing store directory; removed by `body`'s caller through `defer`.
    static func makeDirectory() throws -> URL {
        let directory = Support.temporaryDirectory("store")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The names in `directory`, sorted.
    static func names(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    /// The body `GET /video/<bytes>` serves: an MP4 head, then filler, in 16 KiB chunks.
    static func videoChunk(_ index: Int, of total: Int) -> [UInt8] {
        let size = 16_384
        let start = index * size
        let head = MediaSamples.mp4.prefix(16)
        return (start..<min(start + size, total)).map { offset in
            offset < head.count ? head[offset] : UInt8(truncatingIfNeeded: offset &* 7 &+ offset >> 11)
        }
    }

    /// Adds `GET /video/<bytes>`: chunked (no Content-Length), so only the reader's own count bounds it.
    static func addVideo(to router: inout Router) {
        router.get("video/:bytes") { request in
            let total = Int(request.parameters["bytes"] ?? "") ?? 0
            return Response(status: .ok, headers: ["content-type": "video/mp4"], stream: { writer in
                for index in 0..<((total + 16_383) / 16_384) {
                    try await writer.write(ByteBuffer(bytes: Self.videoChunk(index, of: total)))
                }
            })
        }
    }

    /// The SHA-256 of what `GET /video/<total>` serves, computed chunk by chunk.
    static func videoHash(_ total: Int) -> String {
        var hasher = SHA256()
        for index in 0..<((total + 16_383) / 16_384) { hasher.update(videoChunk(index, of: total)) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// A downloader allowed to fetch from this machine's loopback server, storing into `store`.
    static func loopbackDownloader(_ client: WebhookHTTPClient, maxBytes: [MediaKind: Int], store: AttachmentStore) throws -> AttachmentDownloader {
        AttachmentDownloader(
            client: client, check: DestinationCheck(allowHosts: try HostAllowList.parse(["127.0.0.1"]).get()), maxBytes: maxBytes,
            store: store)
    }

    @Test func aDownloadHoldsOneBufferInMemoryWhateverTheFileSize() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = AttachmentStore(directory: directory, retention: .standard)
        try await MediaServer.withServer({ router, _ in Self.addVideo(to: &router) }) { port, _ in
            try await Support.withHTTPClient { client in
                let downloader = try Self.loopbackDownloader(client, maxBytes: [.image: 10_000_000, .audio: 5_000_000, .video: 50_000_000], store: store)
                // One file ten times the size of the other: the memory held is the same buffer.
                for total in [4_000_000, 40_000_000] {
                    let url = try #require(URL(string: "http://127.0.0.1:\(port)/video/\(total)"))
                    let media = try await downloader.download(url, deadline: Support.unreachedDeadline)
                    #expect(media.format == .mp4)
                    #expect(media.size == total)
                    #expect(media.sha256 == Self.videoHash(total))
                    let attributes = try FileManager.default.attributesOfItem(atPath: media.file.path)
                    #expect((attributes[.size] as? Int) == total)
                    #expect(media.peakBufferedBytes > 0)
                    #expect(media.peakBufferedBytes <= MediaBodyWriter.bufferCapacity, "held \(media.peakBufferedBytes) bytes of \(total)")
                }
            }
        }
        // Two finished files, no partial one left.
        let names = try Self.names(in: directory)
        #expect(names.count == 2 && names.allSatisfy(AttachmentStore.isStoredName), "\(names)")
    }

    @Test func aDownloadCutOffMidBodyLeavesNoPartialFile() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = AttachmentStore(directory: directory, retention: .standard)
        try await MediaServer.withServer({ router, _ in Self.addVideo(to: &router) }) { port, _ in
            try await Support.withHTTPClient { client in
                // Past the video limit after several buffers were written: the file existed, and goes.
                let downloader = try Self.loopbackDownloader(client, maxBytes: [.image: 1_000, .audio: 1_000, .video: 2_000_000], store: store)
                let url = try #require(URL(string: "http://127.0.0.1:\(port)/video/3000000"))
                await #expect(throws: AttachmentError.self) { try await downloader.download(url, deadline: Support.unreachedDeadline) }
            }
        }
        #expect(try Self.names(in: directory).isEmpty)
    }

    @Test func aCancelledDownloadStoresNothing() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = AttachmentStore(directory: directory, retention: .standard)
        try await MediaServer.withServer({ router, counters in
            AttachmentDownloadTests.addTricklingImage(to: &router, counters: counters)
        }) { port, counters in
            try await Support.withHTTPClient { client in
                let downloader = try Self.loopbackDownloader(client, maxBytes: [.image: 1_000_000, .audio: 1_000_000, .video: 1_000_000], store: store)
                let url = try #require(URL(string: "http://127.0.0.1:\(port)/slow"))
                let download = Task { try await downloader.download(url, deadline: Support.unreachedDeadline) }
                // Cancelled mid-body, as the chain's deadline cancels a step.
                try await Poll.until("the body has started") { counters.requests.count == 1 }
                try await Task.sleep(for: .milliseconds(200))
                download.cancel()
                // A cut-off body is not a file: the download throws, and nothing is stored.
                await #expect(throws: (any Error).self) { try await download.value }
            }
        }
        #expect(try Self.names(in: directory).isEmpty)
    }

    /// Writes a finished-looking file of `bytes` bytes whose last change was `age` ago.
    @discardableResult
    static func file(_ name: String, bytes: Int = 100, age: TimeInterval, in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(repeating: 7, count: bytes).write(to: url)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -age)], ofItemAtPath: url.path)
        return url
    }

    /// A finished file's name: 64 hex digits and an extension.
    static func stored(_ digit: Character, _ fileExtension: String = "jpg") -> String {
        String(repeating: digit, count: 64) + "." + fileExtension
    }

    @Test func aSweepRemovesFilesPastTheirAgeAndLeavesOthersAlone() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.file(Self.stored("a"), age: 3 * 3600, in: directory)
        try Self.file(Self.stored("b", "mp4"), age: 2 * 3600, in: directory)
        try Self.file(Self.stored("c", "png"), age: 600, in: directory)
        try Self.file(".0E1C-stale.partial", age: 3 * 3600, in: directory)  // left by a crash
        try Self.file("notes.txt", age: 3 * 3600, in: directory)  // not the store's: never touched
        let store = AttachmentStore(directory: directory, retention: AttachmentRetention(maxAge: .seconds(3600), maxTotalBytes: 1_000_000))
        let removed = await store.sweep()
        #expect(Set(removed) == [Self.stored("a"), ".0E1C-stale.partial", Self.stored("b", "mp4")])
        #expect(try Self.names(in: directory) == [Self.stored("c", "png"), "notes.txt"])
    }

    @Test func overItsSizeTheStoreRemovesTheOldestFirstAndKeepsTheNewest() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for (index, digit) in ["1", "2", "3", "4", "5"].enumerated() {
            try Self.file(Self.stored(Character(digit)), bytes: 100, age: TimeInterval(500 - index * 100), in: directory)
        }
        let store = AttachmentStore(directory: directory, retention: AttachmentRetention(maxAge: .seconds(3600), maxTotalBytes: 250))
        #expect(await store.sweep() == [Self.stored("1"), Self.stored("2"), Self.stored("3")])
        #expect(try Self.names(in: directory) == [Self.stored("4"), Self.stored("5")])
    }

    @Test func aFileBeingWrittenIsNeverRemovedHoweverOld() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = AttachmentStore(directory: directory, retention: AttachmentRetention(maxAge: .seconds(1), maxTotalBytes: 1_500))
        let partial = try await store.createPartial()
        try await partial.append(ByteBuffer(repeating: 1, count: 1_000))
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: partial.url.path)
        #expect(await store.sweep().isEmpty)
        #expect(FileManager.default.fileExists(atPath: partial.url.path))
        // Put in place, it counts as stored now: young, and within the size.
        let final = try await store.keep(partial, sha256: String(repeating: "f", count: 64), format: .png)
        #expect(try Self.names(in: directory) == [final.lastPathComponent])
        #expect(await store.sweep().isEmpty)
        #expect(FileManager.default.fileExists(atPath: final.path))
    }

    @Test func storedFilesPastTheSizeGoOldestFirstAsNewOnesArrive() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let samples = [MediaSamples.jpeg, MediaSamples.gif, MediaSamples.png]
        try await MediaServer.withServer({ router, _ in
            for (index, bytes) in samples.enumerated() {
                router.get("image/\(index)") { _ in MediaServer.media(bytes, contentType: nil) }
            }
        }) { port, _ in
            // Room for two of the ~2 KB samples, not three.
            let steps = AttachmentDownloadTests.attachmentStep(
                store: directory, extra: "        maxBytes: {image: 2500, audio: 2500, video: 2500}\n        storeMaxBytes: 5000")
            var files: [String] = []
            for index in samples.indices {
                let payload = Support.alertPayload([("media-url", .string("http://127.0.0.1:\(port)/image/\(index)"))])
                let result = try await Support.dispatch(Support.yaml(steps: steps), payload: payload)
                #expect(result.reason == .extension, "\(result.extensionFailure ?? "")")
                let url = try #require(result.deliveredAttachments.first?["url"]?.stringValue.flatMap(URL.init(string:)))
                files.append(url.lastPathComponent)
            }
            #expect(try Self.names(in: directory) == Array(files.suffix(2)).sorted())
        }
    }

    @Test func theRunningServiceRemovesFilesPastTheirAge() async throws {
        let directory = try Self.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await MediaServer.withServer({ router, _ in
            router.get("image") { _ in MediaServer.media(MediaSamples.png, contentType: "image/png") }
        }) { port, _ in
            // Four seconds: long enough that a loaded machine still finds the file right after the
            // dispatch (with 1 s, CI once saw it swept before the first look), short enough for a test.
            let maxAge = Duration.seconds(4)
            let steps = AttachmentDownloadTests.attachmentStep(store: directory, extra: "        storeMaxAge: \(maxAge.components.seconds)s")
            let configuration = try Configuration(yaml: Support.yaml(steps: steps))
            try await BuiltInExtensions.withRegistry { registry in
                let dispatcher = try Dispatcher(configuration: configuration, registry: registry)
                let payload = Support.alertPayload([("media-url", .string("http://127.0.0.1:\(port)/image"))])
                let dispatched = ContinuousClock.now
                let result = await dispatcher.dispatch(
                    TestRecord(headers: [("apns-topic", Support.bundleID)], payload: .object(payload)).requestRecord,
                    appStates: NoAppStates(), receivedAt: Date())
                let url = try #require(result.deliveredAttachments.first?["url"]?.stringValue.flatMap(URL.init(string:)))
                let firstLook = ContinuousClock.now - dispatched
                #expect(
                    firstLook >= maxAge || FileManager.default.fileExists(atPath: url.path),
                    "stored \(firstLook) ago at most, younger than its age, yet gone")
                // No further download: only the periodic sweep can remove it, and not before its age
                // (the file was stored after `dispatched`); the 20 s limit bounds it from above.
                try await eventually("the sweep removes the file", limit: .seconds(20)) {
                    !FileManager.default.fileExists(atPath: url.path)
                }
                #expect(ContinuousClock.now - dispatched >= maxAge, "removed before its age of \(maxAge)")
            }
        }
    }

    @Test(arguments: [
        ("storeMaxAge: 0s", "storeMaxAge", "0s"),
        ("storeMaxAge: 10", "storeMaxAge", "10"),
        ("storeMaxBytes: -5", "storeMaxBytes", "-5"),
        ("storeMaxBytes: 1000", "storeMaxBytes", "1000"),  // below the largest maxBytes (50000000)
    ] as [(String, String, String)])
    func badRetentionStopsStartUp(line: String, key: String, value: String) async throws {
        let directory = Support.temporaryDirectory("store")
        defer { try? FileManager.default.removeItem(at: directory) }
        let yaml = Support.yaml(steps: "      kind: attachment\n      store: \(directory.path)\n      \(line)")
        let error = try #require(try await Support.startUpError(yaml))
        #expect(error.path == "\(AttachmentOptionsTests.stepPath).\(key)")
        #expect(error.value == value)
    }

    @Test func twoStepsSharingAStoreMustAgreeOnItsRetention() async throws {
        let directory = Support.temporaryDirectory("store")
        defer { try? FileManager.default.removeItem(at: directory) }
        let same = """
                  - {kind: attachment, name: a, store: \(directory.path)}
                  - {kind: attachment, name: b, store: \(directory.path)}
            """
        #expect(try await Support.startUpError(Support.yaml(steps: same)) == nil)
        let different = """
                  - {kind: attachment, name: a, store: \(directory.path)}
                  - {kind: attachment, name: b, store: \(directory.path), storeMaxAge: 1h}
            """
        let error = try #require(try await Support.startUpError(Support.yaml(steps: different)))
        #expect(error.path == "\(AttachmentOptionsTests.stepPath)[1].store")
    }
}
