import Dispatcher
import DispatcherTools
import Foundation
import JSON
import Notifications
import Records
import ServiceExtensions
import TestSupport
import Testing

/// `Explainer` and `Explanation`: each stage reads what the dispatcher decided, with the facts and
/// the sentences behind it.
@Suite("explain: the path a request took")
struct ExplainTests {
    /// Explains `payload` (with `headers`) under `yaml`.
    static func explain(
        _ yaml: String = Fixture.appYAML(Fixture.subtitleExtension),
        kinds: [String: TestExtension.Body] = [:],
        headers: [(String, String)] = [("apns-topic", Fixture.bundleID)],
        payload: JSONValue,
        appStates: any AppStateLookup = NoAppStates()
    ) async throws -> RequestExplanation {
        try await explain(TestRecord(headers: headers, payload: payload).requestRecord, yaml, kinds: kinds, appStates: appStates)
    }

    /// Explains `record` under `yaml`.
    static func explain(
        _ record: RequestRecord, _ yaml: String, kinds: [String: TestExtension.Body] = [:], appStates: any AppStateLookup = NoAppStates()
    ) async throws -> RequestExplanation {
        let explainer = Explainer(dispatcher: try Fixture.dispatcher(yaml, kinds: kinds))
        guard case .request(let explanation) = await explainer.explain(record, appStates: appStates) else {
            throw NotARequest()
        }
        return explanation
    }

    struct NotARequest: Error {}

    @Test("a service extension that did not run: gating rule 4 decided, rules 1 to 3b did not apply, rule 5 was not reached")
    func notMutable() async throws {
        let explanation = try await Self.explain(payload: ["aps": ["alert": "Hello"]])
        #expect(explanation.result.reason == .notMutable)
        #expect(explanation.steps.map(\.kind) == [.validation, .pushType, .appState, .discard, .gating, .appSide, .presentation])
        let gating = try #require(explanation.steps.first { $0.kind == .gating })
        #expect(gating.lines.map(\.mark) == [.passed, .passed, .passed, .passed, .passed, .decided, .notReached])
        #expect(gating.facts["decidedBy"] == "not-mutable")
        #expect(gating.lines[5].text.contains("aps.mutable-content is not 1"))
        // Rules 3a and 3b read the user's settings: a token without devices entry has the defaults.
        #expect(gating.lines[3].text == "3a. not-authorized: does not apply, the user's authorization is authorized (the token has no devices entry: the default)")
        #expect(gating.lines[4].text == "3b. alerts-off: does not apply, the app's alerts are on (the token has no devices entry: the default)")
        #expect(gating.facts["rules"]?.arrayValue?.compactMap { $0[path: ["number"]]?.stringValue } == ["1", "2", "3", "3a", "3b", "4", "5"])
        #expect(gating.citations.contains { $0.text.contains("mutable-content key with the value set to 1") && $0.attribution == "Apple, UNNotificationServiceExtension" })
        #expect(explanation.outcomeFacts["reason"] == "not-mutable")
    }

    @Test("a dead letter: the checks before the failed one passed, those after it did not run")
    func deadLetter() async throws {
        let explanation = try await Self.explain(
            headers: [("apns-topic", Fixture.bundleID), ("apns-priority", "7")], payload: ["aps": ["alert": "Hi"]])
        #expect(explanation.steps.map(\.kind) == [.validation])
        let validation = explanation.steps[0]
        let failed = try #require(ValidationCheck.allCases.firstIndex(of: .priorityHeader))
        #expect(validation.lines.map(\.mark) == Array(repeating: .passed, count: failed) + [.decided]
                + Array(repeating: .notReached, count: ValidationCheck.allCases.count - failed - 1))
        #expect(validation.facts["failedCheck"] == "priority-header")
        #expect(validation.citations.first?.text == "One of 10, 5, 1, else BadPriority.")
        #expect(explanation.outcomeFacts["kind"] == "dead-letter")
        #expect(explanation.outcomeFacts["reason"] == "BadPriority")
        #expect(explanation.warnings.isEmpty)
    }

    @Test("priority 10 on a background push is reported as its own check")
    func backgroundPriority() async throws {
        let explanation = try await Self.explain(
            headers: [("apns-topic", Fixture.bundleID), ("apns-push-type", "background"), ("apns-priority", "10")],
            payload: ["aps": ["content-available": 1]])
        #expect(explanation.steps[0].facts["failedCheck"] == "background-priority")
        #expect(explanation.steps[0].citations.first?.text == "Push type background with priority 10: BadPriority.")
    }

    @Test("a launch: the app-side row, the callback, the launch and Apple's sentence on launching")
    func launch() async throws {
        let explanation = try await Self.explain(
            headers: [("apns-topic", Fixture.bundleID), ("app-state", "notRunning")], payload: ["aps": ["alert": "Hi"]])
        let side = try #require(explanation.steps.first { $0.kind == .appSide })
        #expect(side.facts["rule"] == "notRunningAlertText")
        #expect(side.facts["launch"] == "userOpensNotification")
        #expect(side.citations.first?.text == "notRunning | has alert text | null | userOpensNotification | as decided")
        #expect(side.citations.contains { $0.text.hasPrefix("If the app is not running when a remote notification arrives") })
        #expect(explanation.outcome.contains("the app is launched (userOpensNotification)"))
    }

    @Test("where the app state came from: the header, the app-states table, the app's default, the fallback")
    func appStateSources() async throws {
        let token = TestRecord.token()
        let yaml = Fixture.appYAML("    defaultAppState: suspended")
        let cases: [(headers: [(String, String)], table: [String: AppState], yaml: String, state: String, source: String)] = [
            ([("apns-topic", Fixture.bundleID), ("app-state", "foreground")], [token: .background], yaml, "foreground", "header"),
            ([("apns-topic", Fixture.bundleID)], [token: .background], yaml, "background", "appStatesTable"),
            ([("apns-topic", Fixture.bundleID)], [:], yaml, "suspended", "appDefault"),
            ([("apns-topic", Fixture.bundleID)], [:], Fixture.appYAML(), "notRunning", "fallback"),
        ]
        for item in cases {
            let explanation = try await Self.explain(
                item.yaml, headers: item.headers, payload: ["aps": ["alert": "Hi"]], appStates: FixedAppStates(item.table))
            let step = try #require(explanation.steps.first { $0.kind == .appState })
            #expect(step.facts["state"] == .string(item.state))
            #expect(step.facts["source"] == .string(item.source))
        }
    }

    @Test("a modified delivery: the route, its deadline's source, the run and the paths it changed")
    func modified() async throws {
        let yaml = Fixture.appYAML(Fixture.subtitleExtension + "\n    categories:\n      LIVE:\n        deadline: 20s")
        let explanation = try await Self.explain(yaml, payload: Fixture.mutableAlert(category: "LIVE"))
        #expect(explanation.result.reason == .extension)
        let routing = try #require(explanation.steps.first { $0.kind == .routing })
        #expect(routing.facts["choice"] == "app")
        #expect(routing.facts["serviceExtension"] == "subtitle")
        #expect(routing.facts["deadlineMs"] == 20_000)
        #expect(routing.facts["deadlineFrom"] == "categories.LIVE.deadline")
        let run = try #require(explanation.steps.first { $0.kind == .serviceExtension })
        #expect(run.facts["outcome"] == "modified")
        #expect(run.facts["changed"] == [["path": "aps.alert.subtitle", "change": "added"]])
        #expect(run.citations.first?.text.hasPrefix("You can modify any of the content") == true)
    }

    @Test("routing without an extension: a category that opts out, an app with none, an app not configured")
    func noExtension() async throws {
        let optedOut = Fixture.appYAML(Fixture.subtitleExtension + "\n    categories:\n      QUIET:\n        serviceExtension: none")
        let cases: [(yaml: String, category: String?, choice: String)] = [
            (optedOut, "QUIET", "category-opted-out"),
            (Fixture.appYAML(), nil, "app-has-none"),
            ("dispatch:\n  deadline: 1s\n", nil, "app-not-configured"),
        ]
        for item in cases {
            let explanation = try await Self.explain(item.yaml, payload: Fixture.mutableAlert(category: item.category))
            #expect(explanation.result.reason == .noExtension)
            let routing = try #require(explanation.steps.first { $0.kind == .routing })
            #expect(routing.facts["choice"] == .string(item.choice))
            let gating = try #require(explanation.steps.first { $0.kind == .gating })
            #expect(gating.lines.map(\.mark) == [.passed, .passed, .passed, .passed, .passed, .passed, .decided])
            #expect(!explanation.steps.contains { $0.kind == .serviceExtension })
        }
    }

    @Test("an extension that times out, and one that fails: the run's time, expiry and failure, with their sentences")
    func timeoutAndFailure() async throws {
        let yaml = Fixture.appYAML("    serviceExtension: {kind: slow}\n    deadline: 100ms")
        let slow = try await Self.explain(
            yaml, kinds: ["slow": { request in
                try await Task.sleep(for: .seconds(10))
                return request.content
            }], payload: Fixture.mutableAlert())
        let run = try #require(slow.steps.first { $0.kind == .serviceExtension })
        #expect(run.facts["outcome"] == "timeout")
        #expect(run.facts["expired"] == true)
        #expect(run.citations.contains { $0.text.contains("one last chance to execute the block") })
        let failingYAML = Fixture.appYAML("    serviceExtension: {kind: broken}")
        let failing = try await Self.explain(
            failingYAML, kinds: ["broken": { _ in throw TestFailure() }], payload: Fixture.mutableAlert())
        let failed = try #require(failing.steps.first { $0.kind == .serviceExtension })
        #expect(failed.facts["outcome"] == "failed")
        #expect(failed.lines.contains { $0.mark == .decided && $0.text.contains("step broken") })
        #expect(failed.citations.first?.text.contains("A failed step fails the whole chain.") == true)
    }

    struct TestFailure: Error {}

    @Test("an extension that removes the alert text: the post-check keeps the original")
    func alertRemoved() async throws {
        let yaml = Fixture.appYAML("    serviceExtension: {kind: rewrite, remove: [aps.alert]}")
        let explanation = try await Self.explain(yaml, payload: Fixture.mutableAlert())
        #expect(explanation.result.reason == .alertRemoved)
        let run = try #require(explanation.steps.first { $0.kind == .serviceExtension })
        #expect(run.facts["outcome"] == "alert-removed")
        #expect(run.citations.contains { $0.text.contains("the system ignores your modifications") })
    }

    @Test("expired and force-quit requests: discarded, and the stages after it never reached")
    func discarded() async throws {
        let expired = try await Self.explain(
            headers: [("apns-topic", Fixture.bundleID), ("apns-expiration", "1")], payload: Fixture.mutableAlert())
        #expect(expired.steps.map(\.kind) == [.validation, .pushType, .appState, .discard])
        #expect(expired.steps[3].facts["discarded"] == true)
        #expect(expired.steps[3].citations.first?.text.hasPrefix("Non-zero and earlier than the time of processing") == true)
        let forceQuit = try await Self.explain(
            headers: [("apns-topic", Fixture.bundleID), ("app-state", "forceQuit")], payload: ["aps": ["content-available": 1]])
        #expect(forceQuit.steps.map(\.kind) == [.validation, .pushType, .appState, .discard, .appSide])
        #expect(forceQuit.steps[4].facts["rule"] == "forceQuitSilent")
        #expect(forceQuit.outcomeFacts["disposition"] == "discarded")
    }

    @Test("every sample of Config/samples: the explanation's outcome and outputs are the dispatcher's")
    func samples() async throws {
        let root = BuiltBinary.packageRoot()
        let configuration = try Configuration(contentsOfFile: root.appendingPathComponent("Config/dispatcher.yaml").path, environment: [:])
        var registry = ExtensionRegistry()
        BuiltInExtensions.registerRewrite(in: &registry)
        let dispatcher = try Dispatcher(configuration: configuration, registry: registry, extensionFailures: ExtensionFailureLog(logger: CapturedLogs.silent))
        let explainer = Explainer(dispatcher: dispatcher)
        let folder = root.appendingPathComponent("Config/samples")
        var explained = 0
        var responses = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() where name.hasSuffix(".jsonl") {
            let data = try Array(Data(contentsOf: folder.appendingPathComponent(name)))
            for (offset, line) in JSONLinesDispatch.lines(of: data).enumerated() where !JSONLines.isBlank(line) {
                // As `dispatch` reads the line: a response where its topic is the responses topic.
                let record = try JSONLines.decode(line, offset: offset, topics: configuration.topics)
                let explanation = await explainer.explain(record)
                let direct = await dispatcher.decide(record, appStates: NoAppStates(), receivedAt: Date())
                #expect(explanation.isResponse == (record.source.topic == configuration.topics.responses), "\(name):\(offset + 1)")
                #expect(explanation.outputs.map(\.kind) == direct.outputs.map(\.kind), "\(name):\(offset + 1)")
                switch direct.decision {
                case .delivered(let delivery):
                    #expect(explanation.outcomeFacts["disposition"] == .string(delivery.disposition.rawValue), "\(name):\(offset + 1)")
                    #expect(explanation.outcomeFacts["reason"] == .string(delivery.reason.rawValue), "\(name):\(offset + 1)")
                    #expect(explanation.outcomeFacts["launch"] == (delivery.launch.map { .string($0.rawValue) } ?? .null))
                    #expect(explanation.steps.first?.facts["passed"] == true)
                case .deadLettered(let deadLetter):
                    #expect(explanation.outcomeFacts["reason"] == .string(deadLetter.rejection.reason.rawValue), "\(name):\(offset + 1)")
                case .handled(let handled):
                    responses += 1
                    #expect(explanation.outcomeFacts["reason"] == .string(handled.handling.reason.rawValue), "\(name):\(offset + 1)")
                    #expect(explanation.outcomeFacts["row"] == .number(JSONNumber(handled.handling.row.number)), "\(name):\(offset + 1)")
                    let handling = try #require(explanation.steps.first { $0.kind == .responseHandling })
                    #expect(handling.lines.filter { $0.mark == .decided }.count == 1, "\(name):\(offset + 1)")
                case .stored(let stored, _):
                    #expect(explanation.outcomeFacts["key"] == .string(stored.key), "\(name):\(offset + 1)")
                case .several(let parts):
                    #expect(explanation.outcomeFacts["activities"] == .number(JSONNumber(parts.count)), "\(name):\(offset + 1)")
                }
                #expect(explanation.steps.allSatisfy { !$0.verdict.isEmpty })
                #expect(explanation.steps.contains { !$0.citations.isEmpty })
                explained += 1
            }
        }
        #expect(explained >= 60)
        #expect(responses >= 12)
    }

    @Test("as text: the outcome first, numbered stages with marks, quotes with their source, lines wrapped")
    func text() async throws {
        let explanation = Explanation.request(try await Self.explain(payload: ["aps": ["alert": "Hello"]]))
        let text = explanation.text(input: "a test", width: 80)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "Explaining a test")
        #expect(text.contains("Outcome: Delivered as sent (original) (reason not-mutable)"))
        #expect(text.contains("5. Gating (may a service extension run?): rule 4 not-mutable applies"))
        #expect(text.contains("   → 4. not-mutable: applies, aps.mutable-content is not 1"))
        #expect(text.contains("     “The remote notification’s aps dictionary includes"))
        #expect(text.contains("\n       — Apple, UNNotificationServiceExtension <https://developer.apple.com/"))
        // Only the line naming a quote's address may pass the width: it is one word.
        #expect(lines.filter { $0.count > 80 }.allSatisfy { $0.contains("<https://") })
        #expect(text.hasSuffix("Lint: no warnings.\n"))
    }

    @Test("as JSON: the same stages as data, and the outputs as dispatch writes them")
    func json() async throws {
        let request = try await Self.explain(
            headers: [("apns-topic", Fixture.bundleID), ("app-state", "notRunning")], payload: Fixture.mutableAlert())
        let explanation = Explanation.request(request)
        let json = explanation.json(input: ["file": "-"])
        #expect(json[path: ["input", "file"]] == "-")
        #expect(json[path: ["outcome", "reason"]] == "extension")
        #expect(json[path: ["steps"]]?.arrayValue?.compactMap { $0[path: ["step"]]?.stringValue } == request.steps.map(\.kind.rawValue))
        let written = try request.result.outputs.map { try JSONValue(parsing: JSONLines.encode($0)) }
        #expect(json[path: ["outputs"]] == .array(written))
        let citation = try #require(json[path: ["steps"]]?.arrayValue?[0][path: ["citations"]]?.arrayValue?.first)
        #expect(citation[path: ["source"]] == "contract")
        #expect(citation[path: ["attribution"]] == "SEMANTICS.md §1")
    }

    @Test("docs/rules.md gives every delivery reason, action reason, dead-letter reason and lint warning its row in the explain and lint sections")
    func documented() throws {
        let rules = try String(contentsOf: BuiltBinary.packageRoot().appendingPathComponent("docs/rules.md"), encoding: .utf8)
        let explainSection = try #require(rules.components(separatedBy: "## Each reason in `explain`").last)
        // The first cell of each table row: the reasons it is about.
        let firstCells = explainSection.split(separator: "\n").filter { $0.hasPrefix("| `") }.map { $0.dropFirst().split(separator: "|").first ?? "" }
        let reasons =
            DeliveryReason.allCases.map(\.rawValue) + ActionReason.allCases.map(\.rawValue) + RejectionReason.allCases.map(\.rawValue)
            + LintWarning.Code.allCases.map(\.rawValue)
        for reason in reasons {
            #expect(firstCells.contains { $0.contains("`\(reason)`") }, "\(reason)")
        }
    }
}
