import Dispatcher
import Foundation
import JSON
import Notifications
import Records
import ServiceExtensions
import TestSupport
import Testing

/// Building blocks shared by the dispatcher tests: dispatchers from YAML, configurations, payloads,
/// and readers of the output records (the records themselves are TestSupport's ``TestRecord``).
/// Everything goes through the public API.
enum Fixture {
    /// The bundle ID most tests configure: the one ``TestRecord`` sends to unless told otherwise.
    static let bundleID = TestRecord.bundleID

    /// A dispatcher for `yaml` with the built-in `rewrite` plus `kinds`.
    static func dispatcher(
        _ yaml: String,
        kinds: [String: TestExtension.Body] = [:],
        registry custom: ExtensionRegistry? = nil,
        environment: [String: String] = [:]
    ) throws -> Dispatcher {
        var registry = custom ?? ExtensionRegistry()
        BuiltInExtensions.registerRewrite(in: &registry)
        for (kind, body) in kinds {
            registry.register(kind: kind) { _ in { TestExtension(body: body) } }
        }
        // Failures are asserted through the deliveries here (ExtensionFailureLogTests checks the log).
        return try Dispatcher(
            configuration: Configuration(yaml: yaml, environment: environment), registry: registry,
            extensionFailures: ExtensionFailureLog(logger: CapturedLogs.silent))
    }

    /// Expects the chain's elapsed time (its report's) in the window of `deadline` and `grace`: a
    /// deadline that fires early, or seconds late, fails.
    static func expectDeadlineKept(
        _ result: DispatchResult, deadline: Duration, grace: Duration, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let elapsed = try #require(result.extensionElapsed, sourceLocation: sourceLocation)
        let window = DeadlineWindow(deadline: deadline, grace: grace)
        #expect(window.contains(elapsed), "the chain took \(elapsed), expected \(window)", sourceLocation: sourceLocation)
    }

    /// Dispatches one request through a dispatcher for `yaml`.
    static func dispatch(
        _ yaml: String = appYAML(),
        kinds: [String: TestExtension.Body] = [:],
        headers: [(String, String)] = [("apns-topic", bundleID)],
        payload: JSONValue,
        appStates: any AppStateLookup = NoAppStates(),
        receivedAt: Date = Date()
    ) async throws -> DispatchResult {
        let dispatcher = try dispatcher(yaml, kinds: kinds)
        return await dispatcher.dispatch(
            TestRecord(headers: headers, payload: payload).requestRecord, appStates: appStates, receivedAt: receivedAt)
    }

    /// A configuration with one app: `appLines` are written under it (indented by the caller's 4 spaces).
    ///
    /// Its deadline is 5 minutes (the liveness limit must be longer: 10): these tests check what
    /// a dispatch decides, beside hundreds of others in one process on two cores, where an
    /// extension's job can wait seconds for a thread. Tests of the deadline set their own, in
    /// the suites of the timing phase (docs/testing.md, "A test's deadline is not a timing test").
    static func appYAML(_ appLines: String = "", dispatch: String = "") -> String {
        """
        http:
          livenessLimit: 10m
        dispatch:
          deadline: 5m
          expiryGrace: 1s
        \(dispatch)
        apps:
          \(bundleID):
            appDelegate: fetchCompletionHandler
        \(appLines)
        """
    }

    /// An app whose extension sets `aps.alert.subtitle` (so any alert it sees is modified).
    static let subtitleExtension = """
            serviceExtension:
              kind: rewrite
              name: subtitle
              set:
                aps.alert.subtitle: added
        """

    /// A mutable alert payload with alert text.
    static func mutableAlert(category: String? = nil, extra: [(String, JSONValue)] = []) -> JSONValue {
        var aps = JSONObject([("alert", ["title": "Hello", "body": "World"]), ("mutable-content", 1)])
        if let category { aps["category"] = .string(category) }
        var body = JSONObject([("aps", .object(aps))])
        for (key, value) in extra { body[key] = value }
        return .object(body)
    }
}

extension Fixture {
    /// A value that should be a JSON object and is not.
    struct NotAnObject: Error {}

    /// `bytes` parsed as a JSON object.
    static func object(_ bytes: [UInt8]?) throws -> JSONObject {
        // (`#require` cannot be used: JSONValue is ExpressibleByNilLiteral, which confuses its nil check.)
        guard let object = try JSONValue(parsing: bytes ?? []).objectValue else { throw NotAnObject() }
        return object
    }

    /// A record's bytes (an output's value) parsed as a JSON object.
    static func object(_ bytes: RecordBytes?) throws -> JSONObject {
        try object(bytes?.array)
    }
}

/// A Swift service extension whose behaviour each test supplies.
struct TestExtension: ServiceExtension {
    /// What `didReceive` does.
    typealias Body = @Sendable (ServiceExtensionRequest) async throws -> NotificationContent
    let body: Body

    func didReceive(_ request: ServiceExtensionRequest) async throws -> NotificationContent {
        try await body(request)
    }
}

extension DispatchResult {
    /// The delivery record's JSON value.
    func deliveryValue() throws -> JSONObject {
        let record = try #require(outputs.first { $0.kind == .delivery })
        return try Fixture.object(record.value)
    }

    /// The launch record's JSON value, nil when there is none.
    func launchValue() throws -> JSONObject? {
        guard let record = outputs.first(where: { $0.kind == .launch }) else { return nil }
        return try Fixture.object(record.value)
    }

    /// The value of header `name` of output `index`.
    func header(_ name: String, of index: Int = 0) -> String? {
        outputs[index].headers.last { $0.name == name }?.value.map { String(decoding: $0, as: UTF8.self) }
    }
}
