import Dispatcher
import Foundation
import JSON
import Notifications
import Synchronization
import Testing
import TestSupport

/// SEMANTICS section 22: the service extension's memory, with Swift extensions that declare what
/// they hold and chains of the built-in `rewrite` whose content grows; the limit's configuration
/// (`dispatch.extensionMemoryLimit`, an app's, a category's). Webhooks, decryption and downloads
/// against real servers: ServiceExtensionsTests' `ExtensionMemoryBuiltInTests`.
@Suite("The service extension's memory (section 22)")
struct ExtensionMemoryTests {
    /// An app running `steps` (YAML list items, indented by 6) under `limit`, with `appLines` more.
    static func yaml(steps: String, limit: String = "64KiB", appLines: String = "") -> String {
        Fixture.appYAML(
            """
            \(appLines)
                serviceExtension:
            \(steps)
            """, dispatch: "  extensionMemoryLimit: \(limit)")
    }

    /// What a test extension saw of its memory, and whether its last chance was asked for.
    final class Seen: Sendable {
        private let state = Mutex<(held: [Int], limit: Int?, lastChance: Bool, thrown: Bool)>(([], nil, false, false))
        func saw(_ memory: ExtensionMemory) { state.withLock { $0.held.append(memory.held); $0.limit = memory.limit } }
        func threw() { state.withLock { $0.thrown = true } }
        func askedLastChance() { state.withLock { $0.lastChance = true } }
        var held: [Int] { state.withLock { $0.held } }
        var limit: Int? { state.withLock { $0.limit } }
        var lastChance: Bool { state.withLock { $0.lastChance } }
        var thrown: Bool { state.withLock { $0.thrown } }
    }

    /// A Swift extension that declares `bytes`, then (if it is still running) waits `forever` or
    /// returns its content with a subtitle; its last chance hands over a changed payload.
    struct Declaring: ServiceExtension {
        let bytes: Int
        let forever: Bool
        let seen: Seen

        func didReceive(_ request: ServiceExtensionRequest) async throws -> NotificationContent {
            seen.saw(request.memory)
            do {
                try request.memory.hold(bytes)
            } catch {
                seen.threw()
                // A step that ignores the stop cannot hold the notification: the chain ended already.
                if forever { try? await Task.sleep(for: .seconds(600)) }
                throw error
            }
            var content = request.content
            content.payload["declared"] = .number(JSONNumber(bytes))
            return content
        }

        func serviceExtensionTimeWillExpire() async -> NotificationContent? {
            seen.askedLastChance()
            return NotificationContent(payload: ["aps": ["alert": "best attempt"]])
        }
    }

    /// A dispatcher for `yaml` whose kind `declare` makes ``Declaring`` extensions of `bytes`.
    static func dispatcher(_ yaml: String, bytes: Int, forever: Bool = false, seen: Seen) throws -> Dispatcher {
        var registry = ExtensionRegistry()
        registry.register(kind: "declare") { _ in { Declaring(bytes: bytes, forever: forever, seen: seen) } }
        return try Fixture.dispatcher(yaml, registry: registry)
    }

    static func dispatch(_ dispatcher: Dispatcher, _ payload: JSONValue = Fixture.mutableAlert()) async -> DispatchResult {
        await dispatcher.dispatch(TestRecord(payload: payload).requestRecord, appStates: NoAppStates(), receivedAt: Date())
    }

    @Test(
        "a Swift extension that declares more than its limit stops the chain at once: original, extension-memory-limit, expired false, no last chance",
        .timeLimit(.minutes(2)))
    func declaresTooMuch() async throws {
        let seen = Seen()
        // It ignores the stop and sleeps for 10 minutes: the delivery must not wait for it (the deadline is 5 minutes).
        let dispatcher = try Self.dispatcher(Self.yaml(steps: "      - {kind: declare, name: model}"), bytes: 70_000, forever: true, seen: seen)
        let result = await Self.dispatch(dispatcher)
        #expect(result.disposition == .original)
        #expect(result.reason == .extensionMemoryLimit)
        #expect(result.extensionOutcome == .memoryLimit)
        let value = try result.deliveryValue()
        #expect(value["reason"] == "extension-memory-limit")
        #expect(value["payload"] == .object(Fixture.mutableAlert().objectValue!))
        #expect(value["attachments"] == [])
        let report = try #require(value["extension"]?.objectValue)
        #expect(report.keys == ["name", "category", "elapsedMs", "expired"])
        #expect(report["name"] == "model")
        #expect(report["expired"] == false)
        #expect(seen.thrown)
        #expect(!seen.lastChance)
        let stop = try #require(result.delivery?.extensionReport?.memoryStop)
        #expect(stop.step == "model")
        #expect(stop.limitBytes == 65_536)
        // The content's bytes and the declared ones: the payload's compact serialisation is the content.
        let contentBytes = Fixture.mutableAlert().serialized().count
        #expect(stop.heldBytes == contentBytes + 70_000)
        #expect(seen.held == [contentBytes])
        // Stopped at once: long before the deadline (5 minutes) or the sleep (10).
        #expect(try #require(result.extensionElapsed) < .seconds(60))
    }

    @Test("declaring up to the limit is fine, and the step's memory is released when it finishes")
    func withinAndReleased() async throws {
        let seen = Seen()
        let contentBytes = Fixture.mutableAlert().serialized().count
        // Each step declares all the chain has left but for 200 bytes (each hands on a slightly larger content).
        let dispatcher = try Self.dispatcher(
            Self.yaml(steps: "      - {kind: declare, name: one}\n      - {kind: declare, name: two}"),
            bytes: 65_536 - contentBytes - 200, seen: seen)
        let result = await Self.dispatch(dispatcher)
        #expect(result.reason == .extension)
        #expect(!seen.thrown)
        // The second step starts from the first's content alone: what the first declared was released.
        let held = seen.held
        #expect(held.count == 2)
        #expect(held[0] == contentBytes)
        #expect(held[1] > contentBytes && held[1] < contentBytes + 100, "\(held)")
        #expect(seen.limit == 65_536)
    }

    @Test("a finished step's declarations no longer count: what it left running cannot stop the next step")
    func finishedStepDeclaresNothing() async throws {
        let kept = Mutex<ExtensionMemory?>(nil)
        let seen = Mutex<(threw: Bool, before: Int, after: Int)>((false, 0, 0))
        let yaml = Self.yaml(steps: "      - {kind: first}\n      - {kind: second}", limit: "10000")
        let result = try await Fixture.dispatch(
            yaml,
            kinds: [
                "first": { request in
                    kept.withLock { $0 = request.memory }
                    return request.content
                },
                "second": { request in
                    let before = request.memory.held
                    let stale = try #require(kept.withLock { $0 })
                    var threw = false
                    do { try stale.hold(1_000_000) } catch { threw = true }
                    seen.withLock { $0 = (threw, before, request.memory.held) }
                    var content = request.content
                    content.payload["second"] = true
                    return content
                },
            ], payload: Fixture.mutableAlert())
        #expect(result.reason == .extension)
        let observed = seen.withLock { $0 }
        #expect(!observed.threw)
        #expect(observed.before == observed.after)
    }

    @Test("release gives bytes back within the step; available is what is left")
    func releaseAndAvailable() async throws {
        let observed = Mutex<[Int]>([])
        let yaml = Self.yaml(steps: "      - {kind: buffer}", limit: "10000")
        let result = try await Fixture.dispatch(
            yaml,
            kinds: [
                "buffer": { request in
                    let memory = request.memory
                    observed.withLock { $0.append(memory.available) }
                    try memory.hold(6_000)
                    observed.withLock { $0.append(memory.available) }
                    memory.release(6_000)
                    try memory.hold(6_000)  // within the limit again, after the release
                    observed.withLock { $0.append(memory.held) }
                    return request.content
                }
            ], payload: Fixture.mutableAlert())
        #expect(result.reason == .extensionUnchanged)
        let contentBytes = Fixture.mutableAlert().serialized().count
        #expect(observed.withLock { $0 } == [10_000 - contentBytes, 4_000 - contentBytes, contentBytes + 6_000])
    }

    @Test("a chain whose third step's content passes the limit: stopped there, the first two steps' work is not delivered")
    func thirdStepPasses() async throws {
        // The payload's `photos` (3,000 bytes) fits; the third step copies it three times: about 12,000 bytes of content.
        let photos = String(repeating: "p", count: 3_000)
        let yaml = Self.yaml(
            steps: """
                  - {kind: rewrite, name: tag, set: {aps.thread-id: albums}}
                  - {kind: rewrite, name: caption, set: {aps.alert.subtitle: "{{ album }}"}}
                  - {kind: rewrite, name: inline, set: {previews: ["{{ photos }}", "{{ photos }}", "{{ photos }}"]}}
            """, limit: "8KiB")
        let payload = Fixture.mutableAlert(extra: [("album", "Lyon"), ("photos", .string(photos))])
        let result = try await Fixture.dispatch(yaml, payload: payload)
        #expect(result.disposition == .original)
        #expect(result.reason == .extensionMemoryLimit)
        #expect(result.extensionName == "tag+caption+inline")
        let stop = try #require(result.delivery?.extensionReport?.memoryStop)
        #expect(stop.step == "inline")
        #expect(stop.limitBytes == 8_192)
        #expect(stop.heldBytes > 12_000 && stop.heldBytes < 13_500, "\(stop.heldBytes)")
        // The original is delivered: neither the thread id nor the subtitle of the first two steps.
        #expect(try result.deliveryValue()["payload"] == .object(payload.objectValue!))
        // The same chain under a larger limit runs to its end.
        let roomy = try await Fixture.dispatch(yaml.replacingOccurrences(of: "extensionMemoryLimit: 8KiB", with: "extensionMemoryLimit: 16KiB"), payload: payload)
        #expect(roomy.reason == .extension)
    }

    @Test("a request whose own content is over the limit is stopped before its first step runs")
    func originalOverLimit() async throws {
        let seen = Seen()
        let dispatcher = try Self.dispatcher(Self.yaml(steps: "      - {kind: declare, name: first}", limit: "40"), bytes: 1, seen: seen)
        let result = await Self.dispatch(dispatcher)
        #expect(result.reason == .extensionMemoryLimit)
        #expect(result.delivery?.extensionReport?.memoryStop?.step == "first")
        #expect(seen.held.isEmpty)
    }

    @Test("under the filtering entitlement a chain stopped for memory is not filtered: the original is shown")
    func notFiltered() async throws {
        let yaml = Self.yaml(
            steps: """
                  - {kind: rewrite, name: drop, remove: [aps.alert]}
                  - {kind: rewrite, name: grow, set: {blob: ["{{ big }}", "{{ big }}"]}}
            """, limit: "4KiB", appLines: "    entitlements: [filtering]")
        let payload = Fixture.mutableAlert(extra: [("big", .string(String(repeating: "b", count: 2_500)))])
        let result = try await Fixture.dispatch(yaml, payload: payload)
        #expect(result.disposition == .original)
        #expect(result.reason == .extensionMemoryLimit)
        // Without the growing step the same chain is filtered.
        let filtered = try await Fixture.dispatch(
            Self.yaml(steps: "      - {kind: rewrite, name: drop, remove: [aps.alert]}", limit: "4KiB", appLines: "    entitlements: [filtering]"),
            payload: payload)
        #expect(filtered.reason == .extensionFiltered)
    }

    // MARK: Configuration

    @Test("the limit: dispatch's default 25165824, overridden by the app's, then the category's, as the deadline is")
    func routeLimits() async throws {
        let yaml = """
            http: {livenessLimit: 10m}
            dispatch: {deadline: 5m}
            apps:
              com.example.app:
                serviceExtension: {kind: limit}
                categories:
                  SMALL: {extensionMemoryLimit: 2KiB}
                  PLAIN: {deadline: 1m}
              com.example.big:
                extensionMemoryLimit: 1GiB
                serviceExtension: {kind: limit}
                categories:
                  SMALL: {extensionMemoryLimit: 1.5 KiB}
            """
        let kinds: [String: TestExtension.Body] = [
            "limit": { request in
                var content = request.content
                content.payload["limit"] = .number(JSONNumber(request.memory.limit))
                return content
            }
        ]
        let dispatcher = try Fixture.dispatcher(yaml, kinds: kinds)
        func limit(_ topic: String, _ category: String?) async throws -> JSONValue? {
            let record = TestRecord(headers: [("apns-topic", topic)], payload: Fixture.mutableAlert(category: category)).requestRecord
            let result = await dispatcher.dispatch(record, appStates: NoAppStates(), receivedAt: Date())
            return try result.deliveryValue()["payload"]?[path: ["limit"]]
        }
        #expect(try await limit("com.example.app", nil) == 25_165_824)
        #expect(try await limit("com.example.app", "PLAIN") == 25_165_824)
        #expect(try await limit("com.example.app", "SMALL") == 2_048)
        #expect(try await limit("com.example.big", nil) == 1_073_741_824)
        #expect(try await limit("com.example.big", "SMALL") == 1_536)
        #expect(Configuration().dispatch.extensionMemoryLimit == 25_165_824)
    }

    @Test(
        "sizes: whole bytes, or a number with a binary or decimal unit",
        arguments: [
            ("25165824", 25_165_824), ("24MiB", 25_165_824), ("\"24 MiB\"", 25_165_824), ("512KiB", 524_288), ("1.5MiB", 1_572_864),
            ("1GiB", 1_073_741_824), ("2MB", 2_000_000), ("64kB", 64_000), ("100B", 100), ("1", 1), ("4GiB", 4_294_967_296),
        ])
    func sizes(_ text: String, _ bytes: Int) throws {
        let configuration = try Configuration(yaml: "dispatch: {extensionMemoryLimit: \(text)}")
        #expect(configuration.dispatch.extensionMemoryLimit == bytes)
    }

    @Test(
        "a size that is not one stops start-up naming the key path",
        arguments: [
            ("dispatch: {extensionMemoryLimit: 0}", "dispatch.extensionMemoryLimit", "at least 1 byte"),
            ("dispatch: {extensionMemoryLimit: -5}", "dispatch.extensionMemoryLimit", "expected a size"),
            ("dispatch: {extensionMemoryLimit: 1.5}", "dispatch.extensionMemoryLimit", "expected a size"),
            ("dispatch: {extensionMemoryLimit: 24 potatoes}", "dispatch.extensionMemoryLimit", "expected a size"),
            ("dispatch: {extensionMemoryLimit: 0.5B}", "dispatch.extensionMemoryLimit", "expected a size"),
            ("dispatch: {extensionMemoryLimit: 5GiB}", "dispatch.extensionMemoryLimit", "at most 4 GiB"),
            ("dispatch: {extensionMemoryLimit: true}", "dispatch.extensionMemoryLimit", "expected a size"),
            ("apps: {com.example.app: {extensionMemoryLimit: lots}}", "apps[\"com.example.app\"].extensionMemoryLimit", "expected a size"),
            (
                "apps: {com.example.app: {categories: {NEWS: {extensionMemoryLimit: 0KiB}}}}",
                "apps[\"com.example.app\"].categories.NEWS.extensionMemoryLimit", "at least 1 byte"
            ),
        ])
    func badSizes(_ yaml: String, _ path: String, _ message: String) {
        #expect {
            _ = try Configuration(yaml: yaml)
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.path == path && error.message.contains(message)
        }
    }

    @Test("the environment sets dispatch.extensionMemoryLimit, and its mistakes name the variable and the key")
    func environment() throws {
        let variable = "NOTIFICATION_DISPATCHER_DISPATCH_EXTENSION_MEMORY_LIMIT"
        let configuration = try Configuration(yaml: "dispatch: {extensionMemoryLimit: 1MiB}", environment: [variable: "12MiB"])
        #expect(configuration.dispatch.extensionMemoryLimit == 12_582_912)
        #expect {
            _ = try Configuration(yaml: "", environment: [variable: "twelve"])
        } throws: { error in
            (error as? ConfigurationError)?.path == "\(variable) (dispatch.extensionMemoryLimit)"
        }
    }
}
