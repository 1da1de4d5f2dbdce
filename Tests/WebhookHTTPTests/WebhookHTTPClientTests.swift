import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization
import Testing
import TestSupport
import WebhookHTTP

/// The webhook step's HTTP/1.1 client against real loopback servers (``ScriptedHTTPServer``):
/// each guarantee of the step's calls, seen from both ends of the connection.
///
/// The suite runs beside every other suite, where the cooperative pool can be starved for seconds:
/// a time is bounded from below (a timeout did wait), and from above only far from what the bound
/// rules out (a refused connection fails long before a 60 s connect timeout); the failure's code
/// says which limit ended a call.
@Suite("Webhook HTTP client")
struct WebhookHTTPClientTests {
    /// A client with `configure` applied, shut down after `body`.
    private func withClient<Result: Sendable>(
        _ configure: (inout WebhookHTTPClient.Configuration) -> Void = { _ in },
        _ body: (WebhookHTTPClient) async throws -> Result
    ) async throws -> Result {
        var configuration = WebhookHTTPClient.Configuration()
        configuration.connectTimeout = .seconds(5)
        configure(&configuration)
        let client = WebhookHTTPClient(configuration: configuration)
        do {
            let result = try await body(client)
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// Runs `body` against a server answering by `script`, stopped afterwards.
    private func withServer<Result: Sendable>(
        tls: NIOSSLContext? = nil, _ script: @escaping @Sendable (ScriptedHTTPServer.Request) -> ScriptedHTTPServer.Behaviour,
        _ body: (ScriptedHTTPServer) async throws -> Result
    ) async throws -> Result {
        let server = try await ScriptedHTTPServer(tls: tls, script)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// POSTs `body` to `url` through `client`, with a backstop `within` from now.
    private func post(
        _ client: WebhookHTTPClient, _ url: String, body: String = #"{"n":1}"#, headers: [(name: String, value: String)] = [],
        within: Duration = .seconds(10), maxResponseBytes: Int = 1_024
    ) async throws -> WebhookResponse {
        let target = try client.target(WebhookRequestTemplate(url: url, headers: headers))
        return try await target.post(Array(body.utf8), backstop: .now() + TimeAmount(within), maxResponseBytes: maxResponseBytes)
    }

    /// The code of the error `operation` throws; nil when it succeeds (or throws something else).
    private func failure(_ operation: () async throws -> WebhookResponse) async -> WebhookHTTPError.Code? {
        do {
            _ = try await operation()
            return nil
        } catch {
            return (error as? WebhookHTTPError)?.code
        }
    }

    /// Expects `operation` to fail with `code`; otherwise records what it did, error and message.
    private func expectFailure(
        _ code: WebhookHTTPError.Code, sourceLocation: SourceLocation = #_sourceLocation,
        _ operation: () async throws -> WebhookResponse
    ) async {
        do {
            let response = try await operation()
            Issue.record("expected \(code), got a response with status \(response.status)", sourceLocation: sourceLocation)
        } catch let error as WebhookHTTPError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected \(code), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("a POST carries the body, the configured headers and Content-Type; calls in turn share one kept-alive connection")
    func keptAlive() async throws {
        try await withServer({ _ in .respond(body: #"{"ok":true}"#) }) { server in
            try await withClient { client in
                for _ in 0..<3 {
                    let response = try await post(client, server.baseURL + "/hook?x=1", headers: [("Authorization", "Bearer t")])
                    #expect(response.status == 200)
                    #expect(String(buffer: response.body) == #"{"ok":true}"#)
                }
            }
            let requests = server.counters.requests
            #expect(requests.count == 3)
            #expect(server.counters.connections == 1)
            #expect(requests.map(\.sequence) == [1, 2, 3])
            let first = try #require(requests.first)
            #expect(first.uri == "/hook?x=1")
            #expect(first.body == #"{"n":1}"#)
            #expect(first.headers.contains { $0.0 == "Authorization" && $0.1 == "Bearer t" })
            #expect(first.headers.contains { $0.0.lowercased() == "content-type" && $0.1 == "application/json" })
            #expect(first.headers.contains { $0.0.lowercased() == "host" && $0.1 == "127.0.0.1:\(server.port)" })
        }
    }

    @Test("a host name is looked up for each new connection (an address in the URL is connected to directly)")
    func hostName() async throws {
        try await withServer({ _ in .respond(body: "named") }) { server in
            try await withClient { client in
                let response = try await post(client, "http://localhost:\(server.port)/hook")
                #expect(String(buffer: response.body) == "named")
            }
            let request = try #require(server.counters.requests.first)
            #expect(request.headers.contains { $0.0.lowercased() == "host" && $0.1 == "localhost:\(server.port)" })
        }
    }

    @Test("cancelling a call fails it at once and closes its connection: the next call never reads its response")
    func cancellationClosesTheConnection() async throws {
        // The first call is never answered: a connection reused for the second would hold it too.
        try await withServer({ request in
            request.body.contains("first") ? .hold : .respond(body: "second")
        }) { server in
            try await withClient { client in
                let task = Task { await failure { try await post(client, server.baseURL, body: "first", within: .seconds(60)) } }
                #expect(await server.wait { $0.requests.count == 1 })
                task.cancel()
                #expect(await task.value == .cancelled)
                #expect(await server.wait { $0.open == 0 })
                let second = try await post(client, server.baseURL, body: "second")
                #expect(String(buffer: second.body) == "second")
                #expect(server.counters.connections == 2)
            }
        }
    }

    @Test("without cancellation, the client's own deadline ends a call the server never answers")
    func backstop() async throws {
        try await withServer({ _ in .hold }) { server in
            try await withClient { client in
                let started = ContinuousClock.now
                #expect(await failure { try await post(client, server.baseURL, within: .milliseconds(300)) } == .timedOut)
                #expect(ContinuousClock.now - started >= .milliseconds(290))
                #expect(await server.wait { $0.open == 0 })
            }
        }
    }

    @Test("a redirect is not followed: the 3xx comes back as the answer", arguments: [301, 302, 307, 308])
    func noRedirect(status: Int) async throws {
        try await withServer({ _ in .respond(status: status, headers: [("Location", "/elsewhere")]) }) { server in
            try await withClient { client in
                let response = try await post(client, server.baseURL + "/hook")
                #expect(response.status == status)
            }
            #expect(server.counters.requests.map(\.uri) == ["/hook"])
        }
    }

    @Test("a body over the cap fails the call, whether announced by Content-Length or chunked", arguments: [false, true])
    func responseTooLarge(chunked: Bool) async throws {
        let big = String(repeating: "x", count: 2_000)
        try await withServer({ _ in
            .respond(headers: chunked ? [("Transfer-Encoding", "chunked")] : [], body: big)
        }) { server in
            try await withClient { client in
                #expect(await failure { try await post(client, server.baseURL, maxResponseBytes: 1_000) } == .responseTooLarge)
                // At the cap exactly, it is accepted.
                let atTheCap = try await post(client, server.baseURL, maxResponseBytes: 2_000)
                #expect(atTheCap.body.readableBytes == 2_000)
            }
        }
    }

    @Test("a refused connection fails the call at once: connection establishment is not retried")
    func refused() async throws {
        let server = try await ScriptedHTTPServer { _ in .respond() }
        let url = server.baseURL
        await server.stop()
        try await withClient({ $0.connectTimeout = .seconds(60) }) { client in
            let started = ContinuousClock.now
            #expect(await failure { try await post(client, url, within: .seconds(120)) } == .connectFailed)
            #expect(ContinuousClock.now - started < .seconds(30))
        }
    }

    @Test("a connection that cannot be made within the connect timeout fails the call")
    func connectTimeout() async throws {
        // A listening socket that never accepts, with its accept queue filled: the kernel drops
        // further SYNs, so connecting hangs as it does to a webhook whose queue overflowed.
        let listener = try StalledListener()
        defer { listener.close() }
        try await withClient({ $0.connectTimeout = .milliseconds(300) }) { client in
            let started = ContinuousClock.now
            // The backstop is a minute away: the code says the connect timeout ended the call.
            #expect(await failure { try await post(client, "http://127.0.0.1:\(listener.port)", within: .seconds(60)) } == .connectTimeout)
            #expect(ContinuousClock.now - started >= .milliseconds(290))
        }
    }

    @Test("at most connectionsPerHost connections; calls beyond wait for a free one")
    func connectionLimit() async throws {
        try await withServer({ _ in .respond(body: "ok", delay: .milliseconds(100)) }) { server in
            try await withClient({ $0.connectionsPerHost = 2 }) { client in
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<6 { group.addTask { try await post(client, server.baseURL).status } }
                    for try await status in group { #expect(status == 200) }
                }
            }
            #expect(server.counters.requests.count == 6)
            #expect(server.counters.connections == 2)
            #expect(server.counters.mostOpen == 2)
        }
    }

    @Test("a call waiting for a connection ends at its deadline: cancelled, or the backstop")
    func waitingCallEnds() async throws {
        try await withServer({ request in request.body.contains("hold") ? .hold : .respond() }) { server in
            try await withClient({ $0.connectionsPerHost = 1 }) { client in
                let holding = Task { await failure { try await post(client, server.baseURL, body: "hold") } }
                #expect(await server.wait { $0.requests.count == 1 })
                let waiting = Task { await failure { try await post(client, server.baseURL) } }
                try await Task.sleep(for: .milliseconds(100))
                waiting.cancel()
                #expect(await waiting.value == .cancelled)
                #expect(await failure { try await post(client, server.baseURL, within: .milliseconds(200)) } == .timedOut)
                holding.cancel()
                #expect(await holding.value == .cancelled)
                // The held connection was closed; a new one serves the next call.
                #expect(try await post(client, server.baseURL).status == 200)
            }
            #expect(server.counters.requests.count == 2)
        }
    }

    @Test("an idle connection is closed after the idle timeout, not before")
    func idleTimeout() async throws {
        try await withServer({ _ in .respond() }) { server in
            // With the default 60 s, the connection stays open.
            try await withClient { client in
                _ = try await post(client, server.baseURL)
                try await Task.sleep(for: .milliseconds(500))
                #expect(server.counters.open == 1)
            }
        }
        try await withServer({ _ in .respond() }) { server in
            try await withClient({ $0.idleTimeout = .milliseconds(200) }) { client in
                _ = try await post(client, server.baseURL)
                #expect(await server.wait(limit: .seconds(30)) { $0.open == 0 })
                // The pool let it go: the next call opens a new connection.
                #expect(try await post(client, server.baseURL).status == 200)
                #expect(server.counters.connections == 2)
            }
        }
    }

    @Test("a server's Connection: close, or a connection it closes while idle, is not reused", arguments: [true, false])
    func serverCloses(announced: Bool) async throws {
        try await withServer({ _ in .respond(body: "ok", close: announced) }) { server in
            try await withClient { client in
                _ = try await post(client, server.baseURL)
                if !announced {
                    // The server drops the idle connection; the pool sees it close.
                    #expect(await server.wait { $0.open == 1 })
                    await closeServerSide(server)
                }
                #expect(await server.wait { $0.open == 0 })
                #expect(try await post(client, server.baseURL).status == 200)
            }
            #expect(server.counters.connections == 2)
            #expect(server.counters.requests.count == 2)
        }
    }

    @Test("a reused connection found dead before any byte of the answer: the POST is sent once more, on a new connection")
    func staleConnectionResent() async throws {
        // The second request on the first connection meets a close, as when the server's idle
        // timeout races the reuse.
        try await withServer({ request in
            request.connection == 1 && request.sequence == 2 ? .close : .respond(body: "ok")
        }) { server in
            try await withClient { client in
                _ = try await post(client, server.baseURL, body: "one")
                let second = try await post(client, server.baseURL, body: "two")
                #expect(String(buffer: second.body) == "ok")
            }
            #expect(server.counters.requests.map(\.body) == ["one", "two", "two"])
            #expect(server.counters.connections == 2)
        }
    }

    @Test("a new connection closed before the answer, or a second dead one, fails the call: sent at most twice")
    func closedBeforeAnswer() async throws {
        try await withServer({ request in request.sequence == 1 && request.body == "one" ? .respond() : .close }) { server in
            try await withClient { client in
                #expect(await failure { try await post(client, server.baseURL, body: "fresh") } == .connectionClosed)
                _ = try await post(client, server.baseURL, body: "one")
                #expect(await failure { try await post(client, server.baseURL, body: "two") } == .connectionClosed)
            }
            #expect(server.counters.requests.map(\.body) == ["fresh", "one", "two", "two"])
        }
    }

    @Test("https: a certificate the client is told to trust is accepted; the system's roots refuse it")
    func tls() async throws {
        let certificate = try await SelfSignedCertificate()
        let serverTLS = try NIOSSLContext(
            configuration: .makeServerConfiguration(
                certificateChain: [.certificate(certificate.certificate)], privateKey: .privateKey(certificate.key)))
        try await withServer(tls: serverTLS, { _ in .respond(body: "secure") }) { server in
            try await withClient({ $0.tls.trustRoots = .certificates([certificate.certificate]) }) { client in
                for _ in 0..<2 {
                    let response = try await post(client, server.baseURL)
                    #expect(String(buffer: response.body) == "secure")
                }
            }
            #expect(server.counters.connections == 1)
            try await withClient { client in
                await expectFailure(.tls) { try await post(client, server.baseURL) }
            }
        }
        // Trusted, but made out to another name: refused as well.
        let other = try await SelfSignedCertificate(names: "DNS:other.example")
        let otherTLS = try NIOSSLContext(
            configuration: .makeServerConfiguration(certificateChain: [.certificate(other.certificate)], privateKey: .privateKey(other.key)))
        try await withServer(tls: otherTLS, { _ in .respond(body: "secure") }) { server in
            try await withClient({ $0.tls.trustRoots = .certificates([other.certificate]) }) { client in
                await expectFailure(.tls) { try await post(client, server.baseURL) }
            }
        }
    }

    @Test("a URL or header the client cannot send is refused when the step is built")
    func invalidTemplates() {
        #expect(throws: InvalidWebhookRequest.self) { try WebhookRequestTemplate(url: "ftp://example.com/x", headers: []) }
        #expect(throws: InvalidWebhookRequest.self) { try WebhookRequestTemplate(url: "http:///x", headers: []) }
        #expect(throws: InvalidWebhookRequest.self) { try WebhookRequestTemplate(url: "http://a/x", headers: [("Bad Name", "v")]) }
        #expect(throws: InvalidWebhookRequest.self) { try WebhookRequestTemplate(url: "http://a/x", headers: [("X", "a\r\nInjected: 1")]) }
        #expect(throws: InvalidWebhookRequest.self) { try WebhookRequestTemplate(url: "http://a/x", headers: [("Content-Length", "1")]) }
        #expect(throws: InvalidWebhookRequest.self) { try WebhookRequestTemplate(url: "http://a/x", headers: [("Connection", "close")]) }
        #expect(throws: Never.self) { try WebhookRequestTemplate(url: "https://[::1]:8443/x", headers: [("Authorization", "Bearer t")]) }
    }

    /// Closes every connection the server has, from its side.
    private func closeServerSide(_ server: ScriptedHTTPServer) async {
        await server.closeConnections()
    }
}
