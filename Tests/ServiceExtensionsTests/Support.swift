import Dispatcher
import Foundation
import JSON
import Notifications
import ServiceExtensions
import TestSupport
import Testing
import WebhookHTTP

/// Building blocks of the extension tests: configurations, temporary directories, and dispatching
/// through the real `Dispatcher` with the built-in kinds (the records are TestSupport's `TestRecord`).
enum Support {
    /// The app every test configures.
    static let bundleID = "com.example.app"

    /// The deadline of a download whose test is about what it does (stores, refuses, pins), not
    /// about when it ends: one no machine reaches, however loaded. A 40 MB download under a 60 s
    /// deadline ran out of time beside the main phase's suites (docs/testing.md, "A test's
    /// deadline is not a timing test"). The tests of the deadline itself pass their own.
    static var unreachedDeadline: ContinuousClock.Instant { .now + .seconds(600) }

    /// A fresh directory under the system's temporary directory (not created).
    static func temporaryDirectory(_ label: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("nd-\(label)-\(UUID().uuidString)", isDirectory: true)
    }

    /// A mutable alert payload with `extra` keys beside `aps`.
    static func alertPayload(_ extra: [(String, JSONValue)] = []) -> JSONObject {
        var payload = JSONObject([
            ("aps", ["alert": ["title": "Hello", "body": "World"], "mutable-content": 1]),
        ])
        for (key, value) in extra { payload[key] = value }
        return payload
    }

    /// A configuration whose one app runs `steps` (YAML lines of a list of steps, indented by 6).
    ///
    /// The deadline is 5 minutes unless a test times one: most suites here run beside hundreds of
    /// others in one process on two cores, where a step's next job can wait tens of seconds for
    /// one of the pool's two threads, and a test of what a step refuses or decrypts must not turn
    /// into a race with the clock (docs/testing.md, "A test's deadline is not a timing test").
    /// The liveness limit must exceed the longest deadline (a configuration rule), so it is 10 minutes.
    static func yaml(steps: String, deadline: String = "5m", expiryGrace: String = "1s") -> String {
        """
        http:
          livenessLimit: 10m
        dispatch:
          deadline: \(deadline)
          expiryGrace: \(expiryGrace)
        apps:
          \(bundleID):
            serviceExtension:
        \(steps)
        """
    }

    /// Dispatches one request for `payload` through a dispatcher for `yaml` with the built-in kinds
    /// (`decrypt` reading its `keyEnv` keys from `environment`).
    static func dispatch(
        _ yaml: String, payload: JSONObject, environment: [String: String] = [:]
    ) async throws -> DispatchResult {
        let configuration = try Configuration(yaml: yaml)
        return try await BuiltInExtensions.withRegistry(addKinds: { registry in
            BuiltInExtensions.registerDecrypt(in: &registry, environment: environment)
        }) { registry in
            // Failures are asserted through the deliveries here, not the log.
            let dispatcher = try Dispatcher(
                configuration: configuration, registry: registry, extensionFailures: ExtensionFailureLog(logger: CapturedLogs.silent))
            return await dispatcher.dispatch(
                TestRecord(headers: [("apns-topic", bundleID)], payload: .object(payload)).requestRecord,
                appStates: NoAppStates(), receivedAt: Date())
        }
    }

    /// Builds a dispatcher for `yaml` (to test start-up), returning the configuration error, if any.
    static func startUpError(_ yaml: String, environment: [String: String] = [:]) async throws -> ConfigurationError? {
        let configuration = try Configuration(yaml: yaml)
        return try await BuiltInExtensions.withRegistry(addKinds: { registry in
            BuiltInExtensions.registerDecrypt(in: &registry, environment: environment)
        }) { registry -> ConfigurationError? in
            do throws(ConfigurationError) {
                _ = try Dispatcher(configuration: configuration, registry: registry)
                return nil
            } catch {
                return error
            }
        }
    }
}

extension Support {
    /// Expects the chain's elapsed time (its report's) in `window`.
    static func expectElapsed(
        _ result: DispatchResult, in window: DeadlineWindow, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let elapsed = try #require(result.delivery?.extensionReport?.elapsed, sourceLocation: sourceLocation)
        #expect(window.contains(elapsed), "the chain took \(elapsed), expected \(window)", sourceLocation: sourceLocation)
    }
}

extension DispatchResult {
    /// The delivered payload.
    var deliveredPayload: JSONObject? { delivery?.content.payload.json }

    /// The delivered attachments.
    var deliveredAttachments: [JSONObject] { delivery?.content.attachments ?? [] }

    /// The extension report's failure text.
    var extensionFailure: String? { delivery?.extensionReport?.failure }
}

extension Support {
    /// Runs `body` with the HTTP client attachment downloads use, shut down afterwards.
    static func withHTTPClient<Result: Sendable>(_ body: (WebhookHTTPClient) async throws -> Result) async throws -> Result {
        let client = WebhookHTTPClient(configuration: BuiltInExtensions.webhookClientConfiguration())
        do {
            let result = try await body(client)
            await client.shutdown()
            return result
        } catch {
            await client.shutdown()
            throw error
        }
    }
}

/// Waits for a condition by polling it, with a time limit as the backstop.
enum Poll {
    /// The condition did not hold within the limit.
    struct TimedOut: Error, CustomStringConvertible {
        let what: String
        var description: String { "timed out waiting for \(what)" }
    }

    /// Returns once `condition` holds; throws after `limit`.
    static func until(_ what: String, limit: Duration = .seconds(20), _ condition: () -> Bool) async throws {
        let end = ContinuousClock.now + limit
        while !condition() {
            guard ContinuousClock.now < end else { throw TimedOut(what: what) }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
