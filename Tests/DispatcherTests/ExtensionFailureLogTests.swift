import Foundation
import JSON
import Notifications
import ServiceExtensions
import Synchronization
import Testing
import TestSupport

@testable import Dispatcher

/// Extension failures are seen: a warning per app, category and step and interval, carrying the
/// error's kind, never the payload, the description or a URL.
@Suite("Extension failure log")
struct ExtensionFailureLogTests {
    /// A clock the test moves by hand.
    final class ManualClock: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(by duration: Duration) { instant.withLock { $0 += duration } }
    }

    /// An error whose description quotes what must never reach a log.
    struct LeakyError: ServiceExtensionError, CustomStringConvertible {
        var kind: String { "test-leaky" }
        var description: String { "GET https://media.example/a.jpg?token=s3cr3t failed for Secret Title" }
    }

    /// The longest deadline: on a busy machine an extension's run waits for the cooperative pool,
    /// and these tests are about what a failure logs, never about time.
    static let yaml = """
        dispatch: {deadline: 10m, expiryGrace: 100ms}
        http: {livenessLimit: 15m}
        apps:
          \(Fixture.bundleID):
            serviceExtension:
              - {kind: rewrite, name: tag, set: {aps.thread-id: t}}
              - {kind: broken, name: enrich}
        """

    /// A dispatcher whose `broken` step runs `body`, logging failures to `logs` on `clock`.
    static func dispatcher(logs: CapturedLogs, clock: ManualClock, broken body: @escaping TestExtension.Body) throws -> Dispatcher {
        var registry = ExtensionRegistry()
        BuiltInExtensions.registerRewrite(in: &registry)
        registry.register(kind: "broken") { _ in { TestExtension(body: body) } }
        let failures = ExtensionFailureLog(logger: logs.logger(), interval: .seconds(60), now: { clock.now })
        return try Dispatcher(configuration: try Configuration(yaml: yaml), registry: registry, extensionFailures: failures)
    }

    static func dispatch(_ dispatcher: Dispatcher, category: String) async -> DispatchResult {
        let payload: JSONValue = ["aps": ["alert": ["title": "Secret Title"], "mutable-content": 1, "category": .string(category)]]
        return await dispatcher.dispatch(TestRecord(payload: payload).requestRecord, appStates: NoAppStates(), receivedAt: Date())
    }

    @Test("one warning per app, category and step in an interval; the next carries the count left out")
    func rateLimitedWarnings() async throws {
        let logs = CapturedLogs()
        let clock = ManualClock()
        let dispatcher = try Self.dispatcher(logs: logs, clock: clock) { _ in throw LeakyError() }
        for _ in 0..<3 {
            #expect(await Self.dispatch(dispatcher, category: "NEWS").reason == .extensionFailed)
        }
        #expect(logs.entries.count == 1)
        let first = try #require(logs.entries.first)
        #expect(first.level == "warning")
        #expect(first.metadata["apns.bundle_id"] == Fixture.bundleID)
        #expect(first.metadata["apns.category"] == "NEWS")
        #expect(first.metadata["extension.step"] == "enrich")
        #expect(first.metadata["extension.error"] == "test-leaky")
        #expect(first.metadata["extension.suppressed"] == nil)

        // Another category is another key: logged at once.
        _ = await Self.dispatch(dispatcher, category: "SPORT")
        #expect(logs.entries.count == 2)
        #expect(logs.entries.last?.metadata["apns.category"] == "SPORT")

        // Past the interval, the next failure is logged with the two left out.
        clock.advance(by: .seconds(61))
        _ = await Self.dispatch(dispatcher, category: "NEWS")
        #expect(logs.entries.count == 3)
        #expect(logs.entries.last?.metadata["apns.category"] == "NEWS")
        #expect(logs.entries.last?.metadata["extension.suppressed"] == "2")

        // Nothing of the description, the URL or the payload in any line.
        for entry in logs.entries {
            let text = entry.message + " " + entry.metadata.values.joined(separator: " ")
            for secret in ["s3cr3t", "media.example", "Secret Title", "https://"] {
                #expect(!text.contains(secret), "\(entry)")
            }
        }
    }

    @Test("an error that names no kind is logged by its type; invalid output by its own kind")
    func kindsOfOtherFailures() async throws {
        struct PlainError: Error {}
        let logs = CapturedLogs()
        let clock = ManualClock()
        _ = await Self.dispatch(try Self.dispatcher(logs: logs, clock: clock) { _ in throw PlainError() }, category: "A")
        #expect(logs.entries.last?.metadata["extension.error"] == "PlainError")

        let invalid = try Self.dispatcher(logs: logs, clock: clock) { _ in NotificationContent(payload: ["aps": "not an object"]) }
        #expect(await Self.dispatch(invalid, category: "A").reason == .extensionFailed)
        #expect(logs.entries.last?.metadata["extension.error"] == "invalid-output")
    }

    @Test("categories from payloads cannot grow the limiter past its keys: further ones share one key")
    func boundedKeys() {
        var limiter = ExtensionFailureLimiter(interval: .seconds(60), maxKeys: 2)
        let start = ContinuousClock.now
        func key(_ category: String) -> ExtensionFailureLimiter.Key {
            .init(app: "app", category: category, step: "step")
        }
        #expect(limiter.record(key("a"), kind: "k", at: start) == [.failure(key("a"), kind: "k", suppressed: 0)])
        #expect(limiter.record(key("a"), kind: "k", at: start) == [])
        #expect(limiter.record(key("b"), kind: "k", at: start) == [.failure(key("b"), kind: "k", suppressed: 0)])
        // Full: a third category goes under the shared key, logged once for all the others.
        let other = key(ExtensionFailureLimiter.otherCategories)
        #expect(limiter.record(key("c"), kind: "k", at: start) == [.failure(other, kind: "k", suppressed: 0)])
        #expect(limiter.record(key("d"), kind: "k", at: start) == [])
        #expect(limiter.openWindows == 3)
        // Once windows end they make room; the one that left failures out says how many.
        let later = start + .seconds(61)
        let lines = limiter.record(key("e"), kind: "k", at: later)
        #expect(Set(lines) == [.suppressedOnly(key("a"), count: 1), .suppressedOnly(other, count: 1), .failure(key("e"), kind: "k", suppressed: 0)])
        #expect(limiter.openWindows == 1)
    }
}
