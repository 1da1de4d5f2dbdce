import NIOCore
import Synchronization
import Testing
import TestSupport
import WebhookHTTP

/// The client's one-connection GET (what an attachment download's hop makes) against real
/// loopback servers: where it connects, what it names, and how each failure before the response
/// is told apart.
@Suite("A GET on a connection of its own")
struct StreamedGetTests {
    /// A GET of `target` naming `host`, sent to 127.0.0.1 on `port`.
    private func request(host: String, port: Int, target: String = "/media") throws -> StreamedGet {
        StreamedGet(
            usesTLS: false, host: host, port: port, target: target,
            address: try SocketAddress(ipAddress: "127.0.0.1", port: port), headers: [("Accept", "image/*")])
    }

    /// Runs `body` with a client and a server answering by `script`, both stopped afterwards.
    private func withClientAndServer(
        _ script: @escaping @Sendable (ScriptedHTTPServer.Request) -> ScriptedHTTPServer.Behaviour,
        _ body: (WebhookHTTPClient, ScriptedHTTPServer) async throws -> Void
    ) async throws {
        let server = try await ScriptedHTTPServer(script)
        let client = WebhookHTTPClient()
        do {
            try await body(client, server)
        } catch {
            await client.shutdown()
            await server.stop()
            throw error
        }
        await client.shutdown()
        await server.stop()
    }

    /// The failure's code, nil when the GET succeeded or failed otherwise.
    private func failure(of client: WebhookHTTPClient, _ request: StreamedGet) async -> WebhookHTTPError.Code? {
        do {
            try await client.withResponse(to: request) { _ in }
            return nil
        } catch {
            return (error as? WebhookHTTPError)?.code
        }
    }

    @Test("the connection goes to the given address while Host names the URL's host; the body is read to its end, then the connection closes")
    func pinnedAndStreamed() async throws {
        let body = String(repeating: "0123456789", count: 20_000)
        try await withClientAndServer({ _ in .respond(headers: [("Content-Type", "image/png")], body: body) }) { client, server in
            // `.invalid` never resolves (RFC 6761): only the given address can be reached.
            let request = try request(host: "media.invalid", port: server.port, target: "/a%20b/c?size=2")
            let (status, contentType, received) = try await client.withResponse(to: request) { response in
                var received: [UInt8] = []
                while let chunk = try await response.nextChunk() { received += chunk.readableBytesView }
                return (response.status, response.header("content-type"), received)
            }
            #expect(status == 200)
            #expect(contentType == "image/png")
            #expect(received == Array(body.utf8))
            let seen = try #require(server.counters.requests.first)
            #expect(seen.uri == "/a%20b/c?size=2")
            #expect(seen.headers.contains { $0.0.lowercased() == "host" && $0.1 == "media.invalid:\(server.port)" })
            #expect(seen.headers.contains { $0.0.lowercased() == "accept" && $0.1 == "image/*" })
            #expect(seen.headers.contains { $0.0.lowercased() == "connection" && $0.1 == "close" })
            #expect(await server.wait(limit: .seconds(60)) { $0.open == 0 }, "the connection stayed open")
        }
    }

    @Test("a server that closes without answering fails the GET before its body runs, as connection-closed")
    func closedBeforeTheHead() async throws {
        try await withClientAndServer({ _ in .close }) { client, server in
            let request = try request(host: "127.0.0.1", port: server.port)
            #expect(await failure(of: client, request) == .connectionClosed)
        }
    }

    @Test("a refused connection fails as connect-failed")
    func refused() async throws {
        let port = try LoopbackPort.free()
        let client = WebhookHTTPClient()
        let request = try request(host: "127.0.0.1", port: port)
        let code = await failure(of: client, request)
        await client.shutdown()
        #expect(code == .connectFailed)
    }

    @Test("cancelling a GET that waits for its response closes its connection at once")
    func cancelledWhileWaiting() async throws {
        // A server that never answers: the GET waits until its task is cancelled.
        try await withClientAndServer({ _ in .hold }) { client, server in
            let request = try request(host: "127.0.0.1", port: server.port)
            let get = Task { try await client.withResponse(to: request) { _ in } }
            #expect(await server.wait(limit: .seconds(60)) { $0.requests.count == 1 }, "the request never arrived")
            get.cancel()
            await #expect(throws: CancellationError.self) { try await get.value }
            #expect(await server.wait(limit: .seconds(60)) { $0.open == 0 }, "the connection stayed open")
        }
    }

    @Test("cancelling a GET while its connection is being made ends it at once, not at the connect timeout")
    func cancelledWhileConnecting() async throws {
        let listener = try LoopbackPort.BlackHole()
        defer { listener.close() }
        var configuration = WebhookHTTPClient.Configuration()
        configuration.connectTimeout = .seconds(120)
        let client = WebhookHTTPClient(configuration: configuration)
        let request = try request(host: "127.0.0.1", port: listener.port)
        let ended = Mutex(false)
        let get = Task {
            defer { ended.withLock { $0 = true } }
            try await client.withResponse(to: request) { _ in }
        }
        // The SYN is dropped: the connect is still waiting, as it would for a host that never answers.
        try await Task.sleep(for: .milliseconds(300))
        #expect(!ended.withLock { $0 }, "the connection was made or refused: the listener does not hold it")
        let cancelledAt = ContinuousClock.now
        get.cancel()
        await #expect(throws: CancellationError.self) { try await get.value }
        // Far below the 120 s connect timeout that would end it otherwise.
        #expect(ContinuousClock.now - cancelledAt < .seconds(60))
        await client.shutdown()
    }
}
