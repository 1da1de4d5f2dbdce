import Dispatcher
import Foundation
import JSON
import Notifications
import Synchronization
import Testing
import TestSupport

/// SEMANTICS section 4: running a service extension, one test per row of its table, with Swift
/// extensions registered by kind (the webhook rows run against real HTTP servers in WebhookTests).
@Suite("Running service extensions (section 4)")
struct ServiceExtensionRunTests {
    /// An app whose extension is the single step `kind`.
    /// A configuration running `kind` under `deadline`: long by default, so that steps expected to
    /// finish in time do so even on a loaded machine; the timeout tests pass a short one.
    private func yaml(kind: String, deadline: String = "30s", grace: String = "300ms") -> String {
        """
        dispatch:
          deadline: \(deadline)
          expiryGrace: \(grace)
        apps:
          \(Fixture.bundleID):
            serviceExtension:
              kind: \(kind)
        """
    }

    /// Content with `aps.alert.subtitle` set to `subtitle`.
    private static func withSubtitle(_ content: NotificationContent, _ subtitle: String) -> NotificationContent {
        var content = content
        var aps = content.payload["aps"]?.objectValue ?? JSONObject()
        var alert = aps["alert"]?.objectValue ?? JSONObject()
        alert["subtitle"] = .string(subtitle)
        aps["alert"] = .object(alert)
        content.payload["aps"] = .object(aps)
        return content
    }

    /// Waits far beyond any deadline of these tests; cancelled at the deadline.
    private static func waitForCancellation() async throws {
        try await Task.sleep(for: .seconds(120))
    }

    @Test("finished in time with different payload → modified, extension")
    func modified() async throws {
        let result = try await Fixture.dispatch(
            yaml(kind: "tag"), kinds: ["tag": { Self.withSubtitle($0.content, "tagged") }], payload: Fixture.mutableAlert())
        #expect(result.disposition == .modified)
        #expect(result.reason == .extension)
        #expect(result.extensionOutcome == .modified)
        let value = try result.deliveryValue()
        #expect(value["payload"]?[path: ["aps", "alert", "subtitle"]] == "tagged")
        let report = try #require(value["extension"]?.objectValue)
        #expect(report["name"] == "tag")
        #expect(report["expired"] == false)
        #expect(report["category"] == .null)
    }

    @Test("finished in time with only attachments added → modified, extension")
    func attachmentsOnly() async throws {
        let result = try await Fixture.dispatch(
            yaml(kind: "attach"),
            kinds: ["attach": { NotificationContent(payload: $0.content.payload, attachments: [["url": "file:///a.png"]]) }],
            payload: Fixture.mutableAlert())
        #expect(result.reason == .extension)
        #expect(try result.deliveryValue()["attachments"] == [["url": "file:///a.png"]])
    }

    @Test("finished in time with content equal as JSON → original, extension-unchanged")
    func unchanged() async throws {
        let result = try await Fixture.dispatch(
            yaml(kind: "reorder"),
            kinds: [
                "reorder": { request in
                    // Same JSON: keys in another order and the custom 1 written as 1.0.
                    let aps = request.content.payload["aps"] ?? .null
                    return NotificationContent(
                        payload: JSONObject([("count", .number(JSONNumber(text: "1.0")!)), ("aps", aps)]))
                }
            ],
            payload: Fixture.mutableAlert(extra: [("count", 1)]))
        #expect(result.disposition == .original)
        #expect(result.reason == .extensionUnchanged)
        let delivered = try result.deliveryValue()["payload"]
        #expect(delivered == Fixture.mutableAlert(extra: [("count", 1)]))
        #expect(delivered?.compactText.contains(#""count":1"#) == true)
    }

    @Test("deadline passed, a different best attempt handed over → modified, extension-expired-best-attempt")
    func expiredBestAttempt() async throws {
        var registry = ExtensionRegistry()
        registry.register(kind: "partial") { _ in { PartialWorkExtension() } }
        let dispatcher = try Fixture.dispatcher(yaml(kind: "partial", deadline: "300ms"), registry: registry)
        let result = await dispatcher.dispatch(
            TestRecord(payload: Fixture.mutableAlert()).requestRecord, appStates: NoAppStates(), receivedAt: Date())
        #expect(result.disposition == .modified)
        #expect(result.reason == .extensionExpiredBestAttempt)
        let value = try result.deliveryValue()
        #expect(value["payload"]?[path: ["aps", "alert", "subtitle"]] == "partial")
        #expect(value["extension"]?[path: ["expired"]] == true)
        let elapsed = try #require(value["extension"]?[path: ["elapsedMs"]]?.numberValue?.intValue)
        #expect(DeadlineWindow(deadline: .milliseconds(300), grace: .milliseconds(300)).contains(.milliseconds(elapsed)))
    }

    @Test("deadline passed without a best attempt → original, extension-timeout")
    func timeout() async throws {
        let result = try await Fixture.dispatch(
            yaml(kind: "slow", deadline: "300ms"),
            kinds: [
                "slow": { request in
                    try await Self.waitForCancellation()
                    return Self.withSubtitle(request.content, "too late")
                }
            ],
            payload: Fixture.mutableAlert())
        #expect(result.disposition == .original)
        #expect(result.reason == .extensionTimeout)
        try Fixture.expectDeadlineKept(result, deadline: .milliseconds(300), grace: .milliseconds(300))
        #expect(result.extensionOutcome == .timeout)
        let value = try result.deliveryValue()
        #expect(value["payload"] == Fixture.mutableAlert())
        #expect(value["extension"]?[path: ["expired"]] == true)
    }

    @Test("deadline passed with a best attempt equal to the original → original, extension-timeout")
    func bestAttemptEqualToOriginal() async throws {
        var registry = ExtensionRegistry()
        registry.register(kind: "echo") { _ in { PartialWorkExtension(partialSubtitle: nil) } }
        let dispatcher = try Fixture.dispatcher(yaml(kind: "echo", deadline: "300ms"), registry: registry)
        let result = await dispatcher.dispatch(
            TestRecord(payload: Fixture.mutableAlert()).requestRecord, appStates: NoAppStates(), receivedAt: Date())
        #expect(result.reason == .extensionTimeout)
        try Fixture.expectDeadlineKept(result, deadline: .milliseconds(300), grace: .milliseconds(300))
    }

    @Test("a step that ignores cancellation does not hold the dispatch past deadline and grace")
    func ignoresCancellation() async throws {
        let gate = Gate()
        let (result, wall) = try await timed {
            try await Fixture.dispatch(
                yaml(kind: "stubborn", deadline: "100ms", grace: "100ms"),
                kinds: [
                    "stubborn": { request in
                        await gate.wait()
                        return request.content
                    }
                ],
                payload: Fixture.mutableAlert())
        }
        gate.open()
        #expect(result.reason == .extensionTimeout)
        // The dispatch itself, not only the report, ends within deadline and grace.
        let window = DeadlineWindow(deadline: .milliseconds(100), grace: .milliseconds(100))
        #expect(window.contains(wall), "the dispatch took \(wall), expected \(window)")
        try Fixture.expectDeadlineKept(result, deadline: .milliseconds(100), grace: .milliseconds(100))
    }

    @Test("a step that throws → original, extension-failed")
    func failedByError() async throws {
        struct Broken: Error {}
        let result = try await Fixture.dispatch(
            yaml(kind: "broken"), kinds: ["broken": { _ in throw Broken() }], payload: Fixture.mutableAlert())
        #expect(result.disposition == .original)
        #expect(result.reason == .extensionFailed)
        #expect(result.extensionOutcome == .failed)
        #expect(result.delivery?.extensionReport?.failure?.contains("broken") == true)
    }

    @Test(
        "a step whose output breaks the type rules of section 2 → original, extension-failed",
        arguments: [
            ["aps": ["alert": "Hi", "badge": "three"]] as JSONValue,
            ["notAps": ["alert": "Hi"]],
            ["aps": "not an object"],
            ["aps": ["alert": "Hi", "sound": ["volume": 2]]],
        ])
    func failedByInvalidContent(output: JSONValue) async throws {
        let result = try await Fixture.dispatch(
            yaml(kind: "bad"), kinds: ["bad": { _ in NotificationContent(payload: output.objectValue ?? JSONObject()) }],
            payload: Fixture.mutableAlert())
        #expect(result.disposition == .original)
        #expect(result.reason == .extensionFailed)
        #expect(try result.deliveryValue()["payload"] == Fixture.mutableAlert())
    }

    @Test("a finished result without alert text → original, alert-removed")
    func alertRemoved() async throws {
        let result = try await Fixture.dispatch(
            yaml(kind: "strip"),
            kinds: ["strip": { _ in NotificationContent(payload: ["aps": ["badge": 1]]) }],
            payload: Fixture.mutableAlert())
        #expect(result.disposition == .original)
        #expect(result.reason == .alertRemoved)
        #expect(result.extensionOutcome == .alertRemoved)
        let value = try result.deliveryValue()
        #expect(value["payload"] == Fixture.mutableAlert())
        #expect(value["badgeEffect"] == "unchanged")
    }

    @Test("a best attempt without alert text → original, alert-removed")
    func bestAttemptAlertRemoved() async throws {
        var registry = ExtensionRegistry()
        registry.register(kind: "partial") { _ in { PartialWorkExtension(removesAlert: true) } }
        let dispatcher = try Fixture.dispatcher(yaml(kind: "partial", deadline: "300ms"), registry: registry)
        let result = await dispatcher.dispatch(
            TestRecord(payload: Fixture.mutableAlert()).requestRecord, appStates: NoAppStates(), receivedAt: Date())
        #expect(result.disposition == .original)
        #expect(result.reason == .alertRemoved)
        #expect(result.delivery?.extensionReport?.expired == true)
        try Fixture.expectDeadlineKept(result, deadline: .milliseconds(300), grace: .milliseconds(300))
    }

    @Test("the factory makes one instance per request, as Apple does")
    func instancePerRequest() async throws {
        let made = Mutex(0)
        var registry = ExtensionRegistry()
        registry.register(kind: "counted") { _ in
            {
                made.withLock { $0 += 1 }
                return TestExtension { $0.content }
            }
        }
        let dispatcher = try Fixture.dispatcher(yaml(kind: "counted"), registry: registry)
        for _ in 0..<3 {
            _ = await dispatcher.dispatch(
                TestRecord(payload: Fixture.mutableAlert()).requestRecord, appStates: NoAppStates(), receivedAt: Date())
        }
        #expect(made.withLock { $0 } == 3)
    }

    @Test("the step sees the request, its category and name, and the content entering it")
    func requestSeenByStep() async throws {
        let seen = Mutex<[String]>([])
        let result = try await Fixture.dispatch(
            yaml(kind: "spy"),
            kinds: [
                "spy": { request in
                    seen.withLock {
                        $0 = [
                            request.notification.apnsID.description, request.category ?? "-", request.stepName,
                            request.notification.deviceToken,
                        ]
                    }
                    return request.content
                }
            ],
            headers: [("apns-topic", Fixture.bundleID), ("apns-id", "11111111-2222-3333-4444-555555555555")],
            payload: Fixture.mutableAlert(category: "NEWS"))
        #expect(result.reason == .extensionUnchanged)
        #expect(seen.withLock { $0 } == ["11111111-2222-3333-4444-555555555555", "NEWS", "spy", TestRecord.token()])
    }
}

/// An extension that records partial work in `didReceive`, then waits past the deadline; it hands
/// the partial work over in `serviceExtensionTimeWillExpire`, like Apple's sample code.
final class PartialWorkExtension: ServiceExtension {
    private let partial = Mutex<NotificationContent?>(nil)
    private let partialSubtitle: String?
    private let removesAlert: Bool

    init(partialSubtitle: String? = "partial", removesAlert: Bool = false) {
        self.partialSubtitle = partialSubtitle
        self.removesAlert = removesAlert
    }

    func didReceive(_ request: ServiceExtensionRequest) async throws -> NotificationContent {
        var content = request.content
        if removesAlert {
            content = NotificationContent(payload: ["aps": ["sound": "default"]])
        } else if let partialSubtitle {
            var aps = content.payload["aps"]?.objectValue ?? JSONObject()
            var alert = aps["alert"]?.objectValue ?? JSONObject()
            alert["subtitle"] = .string(partialSubtitle)
            aps["alert"] = .object(alert)
            content.payload["aps"] = .object(aps)
        }
        partial.withLock { $0 = content }
        try await Task.sleep(for: .seconds(120))
        return content
    }

    func serviceExtensionTimeWillExpire() async -> NotificationContent? {
        partial.withLock { $0 }
    }
}
