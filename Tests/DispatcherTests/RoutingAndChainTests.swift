import Dispatcher
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// SEMANTICS section 4: routing by bundle ID and exact category, chains, and per-app and
/// per-category deadlines.
@Suite("Routing and chains (section 4)")
struct RoutingAndChainTests {
    private let routedYAML = """
        dispatch:
          deadline: 10s
          expiryGrace: 200ms
        apps:
          com.example.app:
            serviceExtension:
              kind: rewrite
              name: app-step
              set: {aps.alert.subtitle: app}
            categories:
              NEWS:
                serviceExtension:
                  kind: rewrite
                  name: news-step
                  set: {aps.alert.subtitle: news}
              QUIET:
                serviceExtension: none
              SLOW:
                deadline: 150ms
          com.example.other:
            serviceExtension:
              kind: rewrite
              name: other-step
              set: {aps.alert.subtitle: other}
        """

    private func subtitle(_ result: DispatchResult) throws -> JSONValue? {
        try result.deliveryValue()["payload"]?[path: ["aps", "alert", "subtitle"]]
    }

    @Test("a category with its own serviceExtension uses it")
    func categoryExtension() async throws {
        let result = try await Fixture.dispatch(routedYAML, payload: Fixture.mutableAlert(category: "NEWS"))
        #expect(result.extensionName == "news-step")
        #expect(try subtitle(result) == "news")
        #expect(try result.deliveryValue()["extension"]?[path: ["category"]] == "NEWS")
    }

    @Test("a category whose serviceExtension is none runs no extension")
    func categoryNone() async throws {
        let result = try await Fixture.dispatch(routedYAML, payload: Fixture.mutableAlert(category: "QUIET"))
        #expect(result.reason == .noExtension)
    }

    @Test("an unlisted category, a differently cased one, or none at all uses the app's extension", arguments: [
        "SPORTS", "news", nil,
    ])
    func appExtension(category: String?) async throws {
        let result = try await Fixture.dispatch(routedYAML, payload: Fixture.mutableAlert(category: category))
        #expect(result.extensionName == "app-step")
        #expect(try subtitle(result) == "app")
    }

    @Test("routing is by bundle ID")
    func byBundleID() async throws {
        let result = try await Fixture.dispatch(
            routedYAML, headers: [("apns-topic", "com.example.other")], payload: Fixture.mutableAlert(category: "NEWS"))
        #expect(result.extensionName == "other-step")
    }

    @Test("a category's deadline overrides the app's and dispatch.deadline")
    func categoryDeadline() async throws {
        let yaml = """
            dispatch:
              deadline: 30s
              expiryGrace: 100ms
            apps:
              com.example.app:
                deadline: 20s
                serviceExtension: {kind: slow}
                categories:
                  SLOW: {deadline: 150ms}
            """
        let result = try await Fixture.dispatch(
            yaml, kinds: ["slow": Self.slow], payload: Fixture.mutableAlert(category: "SLOW"))
        #expect(result.reason == .extensionTimeout)
        try Fixture.expectDeadlineKept(result, deadline: .milliseconds(150), grace: .milliseconds(100))
    }

    @Test("an app's deadline overrides dispatch.deadline")
    func appDeadline() async throws {
        let yaml = """
            dispatch:
              deadline: 30s
              expiryGrace: 100ms
            apps:
              com.example.app:
                deadline: 150ms
                serviceExtension: {kind: slow}
            """
        let result = try await Fixture.dispatch(yaml, kinds: ["slow": Self.slow], payload: Fixture.mutableAlert())
        #expect(result.reason == .extensionTimeout)
        try Fixture.expectDeadlineKept(result, deadline: .milliseconds(150), grace: .milliseconds(100))
    }

    /// A step that runs until it is cancelled.
    private static let slow: TestExtension.Body = { request in
        try await Task.sleep(for: .seconds(120))
        return request.content
    }

    @Test("a chain runs its steps in order, each on the previous step's content; the name joins them with +")
    func chainInOrder() async throws {
        let yaml = """
            apps:
              com.example.app:
                serviceExtension:
                  - {kind: rewrite, name: first, set: {aps.alert.subtitle: one}}
                  - {kind: rewrite, name: second, set: {aps.alert.body: "{{aps.alert.subtitle}} then two"}}
            """
        let result = try await Fixture.dispatch(yaml, payload: Fixture.mutableAlert())
        #expect(result.extensionName == "first+second")
        #expect(try result.deliveryValue()["payload"]?[path: ["aps", "alert", "body"]] == "one then two")
    }

    @Test("attachments added by the steps of a chain accumulate")
    func attachmentsAccumulate() async throws {
        let yaml = """
            apps:
              com.example.app:
                serviceExtension: [{kind: attachA}, {kind: attachB}]
            """
        let attach: (String) -> TestExtension.Body = { name in
            { request in
                var content = request.content
                content.attachments.append(["identifier": .string(name)])
                return content
            }
        }
        let result = try await Fixture.dispatch(
            yaml, kinds: ["attachA": attach("a"), "attachB": attach("b")], payload: Fixture.mutableAlert())
        #expect(result.reason == .extension)
        #expect(try result.deliveryValue()["attachments"] == [["identifier": "a"], ["identifier": "b"]])
    }

    @Test("a chain whose second step is slow hands over the first step's content as best attempt")
    func chainBestAttemptOfFirstStep() async throws {
        let yaml = """
            dispatch: {deadline: 200ms, expiryGrace: 100ms}
            apps:
              com.example.app:
                serviceExtension:
                  - {kind: rewrite, name: quick, set: {aps.alert.subtitle: quick}}
                  - {kind: slow, name: stuck}
            """
        let result = try await Fixture.dispatch(yaml, kinds: ["slow": Self.slow], payload: Fixture.mutableAlert())
        #expect(result.disposition == .modified)
        #expect(result.reason == .extensionExpiredBestAttempt)
        try Fixture.expectDeadlineKept(result, deadline: .milliseconds(200), grace: .milliseconds(100))
        #expect(result.extensionName == "quick+stuck")
        #expect(try subtitle(result) == "quick")
    }

    @Test("a chain shares one deadline: the running step's own best attempt wins over the last finished step")
    func chainRunningStepBestAttempt() async throws {
        var registry = ExtensionRegistry()
        registry.register(kind: "partial") { _ in { PartialWorkExtension() } }
        let yaml = """
            dispatch: {deadline: 200ms, expiryGrace: 200ms}
            apps:
              com.example.app:
                serviceExtension:
                  - {kind: rewrite, set: {aps.thread-id: first}}
                  - {kind: partial}
            """
        let dispatcher = try Fixture.dispatcher(yaml, registry: registry)
        let result = await dispatcher.dispatch(
            TestRecord(payload: Fixture.mutableAlert()).requestRecord, appStates: NoAppStates(), receivedAt: Date())
        #expect(result.reason == .extensionExpiredBestAttempt)
        try Fixture.expectDeadlineKept(result, deadline: .milliseconds(200), grace: .milliseconds(200))
        let payload = try result.deliveryValue()["payload"]
        #expect(payload?[path: ["aps", "alert", "subtitle"]] == "partial")
        #expect(payload?[path: ["aps", "thread-id"]] == "first")
    }

    @Test("a failed step fails the whole chain; later steps do not run")
    func chainFailure() async throws {
        let yaml = """
            apps:
              com.example.app:
                serviceExtension:
                  - {kind: rewrite, name: ok, set: {aps.alert.subtitle: fine}}
                  - {kind: rewrite, name: bad, set: {aps.alert.title.deeper: x}}
                  - {kind: never}
            """
        let result = try await Fixture.dispatch(
            yaml, kinds: ["never": { _ in Issue.record("the step after a failure ran"); throw CancellationError() }],
            payload: Fixture.mutableAlert())
        #expect(result.disposition == .original)
        #expect(result.reason == .extensionFailed)
        #expect(result.delivery?.extensionReport?.failure?.contains("bad") == true)
    }
}
