import Dispatcher
import Foundation
import HTTPServer
import JSON
import NIOCore
import NIOHTTP1
import Notifications
import ServiceExtensions
import Synchronization
import Testing
import TestSupport

/// The built-in `webhook` kind (SEMANTICS section 4.1) against real HTTP servers on loopback.
@Suite("Webhook extension (section 4.1)")
struct WebhookTests {
    /// What the server received, for assertions.
    final class Received: Sendable {
        let bodies = Mutex<[String]>([])
        let authorization = Mutex<[String]>([])
    }

    /// A router with one route per behaviour.
    private static func router(received: Received, gate: Gate) -> Router {
        var router = Router()
        router.post("/modify") { request -> Response in
            let body = request.body
            received.bodies.withLock { $0.append(String(buffer: body)) }
            received.authorization.withLock { $0.append(request.headers.first(name: "authorization") ?? "") }
            return LoopbackServer.json(
                #"{"payload": {"aps": {"alert": {"title": "Hello", "subtitle": "from webhook"}}, "n": 1.50}, "attachments": [{"identifier": "img", "url": "https://example.com/a.png"}]}"#
            )
        }
        router.post("/same") { request -> Response in
            let body = request.body
            let text = String(buffer: body)
            // Echo the payload back: {"payload": <the payload sent>}.
            let payload = text.range(of: #""payload":"#).map { String(text[$0.upperBound...].dropLast()) } ?? "{}"
            return LoopbackServer.json(#"{"payload": \#(payload)}"#)
        }
        router.post("/no-content") { _ -> Response in Response(status: .noContent) }
        router.post("/error") { _ -> Response in LoopbackServer.json(#"{"error": "boom"}"#, status: .internalServerError) }
        router.post("/created") { _ -> Response in LoopbackServer.json(#"{"payload": {"aps": {"alert": "x"}}}"#, status: .created) }
        router.post("/redirect") { _ -> Response in
            Response(status: .found, headers: ["location": "/modify"])
        }
        router.post("/garbage") { _ -> Response in LoopbackServer.json("this is not json") }
        router.post("/wrong-shape") { _ -> Response in LoopbackServer.json(#"{"content": {"aps": {"alert": "x"}}}"#) }
        router.post("/bad-payload") { _ -> Response in LoopbackServer.json(#"{"payload": {"aps": {"alert": "x", "badge": "1"}}}"#) }
        router.post("/remove-alert") { _ -> Response in LoopbackServer.json(#"{"payload": {"aps": {"badge": 1}}}"#) }
        router.post("/huge") { _ -> Response in
            LoopbackServer.json(#"{"payload": {"aps": {"alert": "\#(String(repeating: "x", count: 4096))"}}}"#)
        }
        router.post("/slow") { _ -> Response in
            await gate.wait()
            return Response(status: .noContent)
        }
        return router
    }

    /// Dispatches a mutable alert through an app whose extension is `steps` (YAML flow list).
    /// - Parameter logs: where the dispatcher logs step failures (with their kinds).
    private func dispatch(
        steps: String, baseURL: String, deadline: String = "5s", connectTimeout: Duration = .seconds(2), category: String? = "NEWS",
        logs: CapturedLogs = CapturedLogs()
    ) async throws -> DispatchResult {
        // The liveness limit must pass the longest deadline: room for the 5-minute one below.
        let yaml = """
            http: {livenessLimit: 10m}
            dispatch: {deadline: \(deadline), expiryGrace: 100ms}
            apps:
              com.example.app:
                serviceExtension: \(steps.replacingOccurrences(of: "BASE", with: baseURL))
            """
        let configuration = try Configuration(yaml: yaml)
        // A connect time-out with room for a loaded machine (the whole suite starts at once on two
        // cores); the refused connection of `connectionFailure` fails at once anyway.
        return try await BuiltInExtensions.withRegistry(maxResponseBytes: 1_024, connectTimeout: connectTimeout) { registry in
            let dispatcher = try Dispatcher(
                configuration: configuration, registry: registry, extensionFailures: ExtensionFailureLog(logger: logs.logger()))
            let record = TestRecord(
                headers: [("apns-topic", Fixture.bundleID), ("X-Custom", "kept"), ("apns-id", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")],
                payload: Fixture.mutableAlert(category: category)).requestRecord
            return await dispatcher.dispatch(record, appStates: NoAppStates(), receivedAt: Date())
        }
    }

    /// Runs `body` against a fresh server.
    private func withServer<Result: Sendable>(
        received: Received = Received(), gate: Gate = Gate(), _ body: (String) async throws -> Result
    ) async throws -> Result {
        try await LoopbackServer.with(Self.router(received: received, gate: gate), body)
    }

    @Test("200 with new payload and attachments → modified; the POST carries the request")
    func modifies() async throws {
        let received = Received()
        let result = try await withServer(received: received) { base in
            try await dispatch(
                steps: "{kind: webhook, name: decorate, url: 'BASE/modify', headers: {Authorization: Bearer t0k}}",
                baseURL: base)
        }
        #expect(result.disposition == .modified)
        #expect(result.reason == .extension)
        #expect(result.extensionName == "decorate")
        let value = try result.deliveryValue()
        #expect(value["payload"]?[path: ["aps", "alert", "subtitle"]] == "from webhook")
        #expect(value["payload"]?.compactText.contains(#""n":1.50"#) == true)
        #expect(value["attachments"] == [["identifier": "img", "url": "https://example.com/a.png"]])
        #expect(received.authorization.withLock { $0 } == ["Bearer t0k"])
        let sent = try Fixture.object(Array(try #require(received.bodies.withLock { $0.first }).utf8))
        #expect(sent.keys == ["apnsId", "deviceToken", "bundleId", "category", "pushType", "headers", "payload"])
        #expect(sent["apnsId"] == "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
        #expect(sent["deviceToken"] == .string(TestRecord.token()))
        #expect(sent["bundleId"] == "com.example.app")
        #expect(sent["category"] == "NEWS")
        #expect(sent["pushType"] == "alert")
        #expect(sent["headers"]?[path: ["X-Custom"]] == "kept")
        #expect(sent["payload"] == Fixture.mutableAlert(category: "NEWS"))
    }

    @Test("200 with the same payload, or 204 → original, extension-unchanged", arguments: ["same", "no-content"])
    func unchanged(route: String) async throws {
        let result = try await withServer { base in
            try await dispatch(steps: "{kind: webhook, url: 'BASE/\(route)'}", baseURL: base)
        }
        #expect(result.disposition == .original)
        #expect(result.reason == .extensionUnchanged)
    }

    @Test(
        "another status (a redirect included: none is followed), another body, an oversized body or invalid content → original, extension-failed, with the failure's kind",
        arguments: [
            ("error", "webhook-status"), ("created", "webhook-status"), ("redirect", "webhook-status"),
            ("garbage", "webhook-invalid-body"), ("wrong-shape", "webhook-invalid-body"), ("bad-payload", "invalid-output"),
            ("huge", "webhook-response-too-large"),
        ])
    func fails(route: String, kind: String) async throws {
        let logs = CapturedLogs()
        let result = try await withServer { base in
            try await dispatch(steps: "{kind: webhook, url: 'BASE/\(route)'}", baseURL: base, logs: logs)
        }
        #expect(result.disposition == .original)
        #expect(result.reason == .extensionFailed)
        #expect(try result.deliveryValue()["payload"] == Fixture.mutableAlert(category: "NEWS"))
        #expect(logs.entries.map { $0.metadata["extension.error"] } == [kind])
    }

    @Test("a connection failure → original, extension-failed, kind webhook-connect-failed")
    func connectionFailure() async throws {
        // Start a server to learn a free port, then call it after it has stopped.
        let base = try await withServer { base in base }
        let logs = CapturedLogs()
        let started = ContinuousClock.now
        // A connect timeout and a deadline far above what a refusal takes, even beside CPU hogs
        // (2.6 s there with a 2 s bound once): a client that retried until the timeout fails the bound.
        let result = try await dispatch(
            steps: "{kind: webhook, url: '\(base)/modify'}", baseURL: base, deadline: "5m", connectTimeout: .seconds(120), logs: logs)
        #expect(result.reason == .extensionFailed)
        #expect(logs.entries.map { $0.metadata["extension.error"] } == ["webhook-connect-failed"])
        // Refused at once: connection establishment is not retried until the connect timeout.
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    @Test("a response without alert text → original, alert-removed")
    func removedAlert() async throws {
        let result = try await withServer { base in
            try await dispatch(steps: "{kind: webhook, url: 'BASE/remove-alert'}", baseURL: base)
        }
        #expect(result.disposition == .original)
        #expect(result.reason == .alertRemoved)
    }

    @Test("a server slower than the deadline → original, extension-timeout; the call is abandoned")
    func slow() async throws {
        let gate = Gate()
        let result = try await withServer(gate: gate) { base in
            defer { gate.open() }
            return try await dispatch(steps: "{kind: webhook, url: 'BASE/slow'}", baseURL: base, deadline: "300ms")
        }
        #expect(result.disposition == .original)
        #expect(result.reason == .extensionTimeout)
        #expect(result.delivery?.extensionReport?.expired == true)
        try Fixture.expectDeadlineKept(result, deadline: .milliseconds(300), grace: .milliseconds(100))
    }

    @Test("a chain whose second step (a slow webhook) misses the deadline delivers the first step's content")
    func chainBestAttempt() async throws {
        let gate = Gate()
        let result = try await withServer(gate: gate) { base in
            defer { gate.open() }
            return try await dispatch(
                steps: "[{kind: rewrite, name: tag, set: {aps.thread-id: t1}}, {kind: webhook, name: hook, url: 'BASE/slow'}]",
                baseURL: base, deadline: "300ms")
        }
        #expect(result.disposition == .modified)
        #expect(result.reason == .extensionExpiredBestAttempt)
        try Fixture.expectDeadlineKept(result, deadline: .milliseconds(300), grace: .milliseconds(100))
        #expect(result.extensionName == "tag+hook")
        #expect(try result.deliveryValue()["payload"]?[path: ["aps", "thread-id"]] == "t1")
    }

    @Test("a webhook after a rewrite receives the rewritten payload, and attachments accumulate")
    func chainFeedsWebhook() async throws {
        let received = Received()
        let result = try await withServer(received: received) { base in
            try await dispatch(
                steps: "[{kind: rewrite, set: {aps.thread-id: t1}}, {kind: webhook, url: 'BASE/modify'}]", baseURL: base)
        }
        #expect(result.reason == .extension, "\(result.delivery?.extensionReport?.failure ?? "no failure reported")")
        let sent = try Fixture.object(Array(try #require(received.bodies.withLock { $0.first }).utf8))
        #expect(sent["payload"]?[path: ["aps", "thread-id"]] == "t1")
    }
}
