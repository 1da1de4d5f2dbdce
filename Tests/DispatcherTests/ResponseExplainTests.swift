import Dispatcher
import DispatcherTools
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// `explain` on a user's response (SEMANTICS section 10): each stage reads what the dispatcher
/// recorded (the row, the response option and its source, the callback rule), with the facts the
/// rows read and the sentences behind them.
@Suite("explain: who handles a response")
struct ResponseExplainTests {
    typealias Act = ResponseFixture.Act

    /// Explains the response `act` to a notification of `category`, for the fixture's chat app
    /// configured by `yaml`, in `state`.
    static func explain(
        _ act: Act, category: String?, userText: String? = nil, state: AppState = .foreground,
        yaml: String = ResponseFixture.yaml(), headers: [(String, String)]? = nil
    ) async throws -> ResponseExplanation {
        let dispatcher = try Dispatcher(configuration: Configuration(yaml: yaml), registry: ExtensionRegistry())
        let value = ResponseFixture.value(act, userText: userText, payload: ResponseFixture.payload(category: category))
        let record = TestRecord(
            headers: headers ?? [("apns-topic", ResponseFixture.bundleID), ("app-state", state.rawValue)], value: value.serialized(),
            topic: TestRecord.responsesTopic
        ).requestRecord
        guard case .response(let explanation) = await Explainer(dispatcher: dispatcher).explain(record) else {
            throw NotAResponse()
        }
        return explanation
    }

    struct NotAResponse: Error {}

    /// A response, the row that must decide it, and what the stage must quote besides the row.
    struct Case: Sendable, CustomTestStringConvertible {
        let act: Act
        let category: String?
        let row: ResponseRow
        /// The start of a sentence the stage quotes (beyond the order and the row).
        let quotes: String?
        /// A fact the stage states about a row.
        let says: String

        var testDescription: String { "\(act) in \(category ?? "no category"): row \(row.number)" }
    }

    static let cases: [Case] = [
        Case(act: .media("play"), category: "VIDEO", row: .mediaCommand, quotes: nil, says: "the response is the media command play"),
        Case(
            act: .action("dismiss"), category: "VIDEO", row: .dismissNotReported, quotes: "dismissing it is reported",
            says: "category VIDEO does not have the customDismissAction option"),
        Case(
            act: .action("LIKE"), category: "MESSAGE", row: .contentExtension, quotes: "If your view controller implements the optional",
            says: "ChatThread has actionResponses"),
        Case(
            act: .action("SAVE"), category: "VIDEO", row: .app, quotes: "If your view controller implements the optional",
            says: "VideoPlayer has no actionResponses: its view controller does not implement didReceive(_:completionHandler:)"),
        Case(
            act: .action("ACK"), category: "PLAIN", row: .app, quotes: nil,
            says: "not presented by a content extension: none of the app's claims category PLAIN"),
        Case(
            act: .action("default"), category: "MESSAGE", row: .app, quotes: "Tapping the notification is the default action",
            says: "the response is not a custom action"),
        Case(
            act: .action("dismiss"), category: "MESSAGE", row: .app, quotes: "dismissing it is reported",
            says: "category MESSAGE has the customDismissAction option: the dismissal is reported"),
    ]

    @Test("who handles it: the dispatcher's row decides, the rows before it did not match and why, the rows after it not reached", arguments: cases)
    func rows(_ item: Case) async throws {
        let explanation = try await Self.explain(item.act, category: item.category)
        let handled = try #require(explanation.result.handledResponse)
        #expect(handled.handling.row == item.row)
        let step = try #require(explanation.steps.first { $0.kind == .responseHandling })
        let marks = step.lines.filter { $0.mark != .note }.map(\.mark)
        let before = item.row.number - 1
        #expect(marks == Array(repeating: .passed, count: before) + [.decided] + Array(repeating: .notReached, count: 4 - before - 1))
        #expect(step.facts["row"] == .number(JSONNumber(item.row.number)))
        #expect(step.lines.contains { $0.text.contains(item.says) }, "\(step.lines.map(\.text))")
        #expect(step.citations.prefix(2).map(\.attribution) == ["SEMANTICS.md §10", "SEMANTICS.md §10"])
        #expect(step.citations[1].text.hasPrefix("\(item.row.number) | "))
        if let quote = item.quotes { #expect(step.citations.contains { $0.text.hasPrefix(quote) }) }
        // The outcome is the action record's.
        let record = try explanation.result.actionValue()
        for field in ["handledBy", "reason", "responseOption", "appCallback", "forwardedToApp", "opensApp", "interfaceDismissed"] {
            #expect(explanation.outcomeFacts[field] == record[field], "\(field)")
        }
        #expect(explanation.steps.map(\.kind).filter { $0 == .contentExtension }.count == (handled.handling.handledBy == .contentExtension ? 1 : 0))
    }

    @Test("the content extension's answer and the entry it came from: the action's, the default entry, the contract's decision")
    func responseOption() async throws {
        let cases: [(act: String, category: String, option: String, from: String, says: String)] = [
            ("LIKE", "MESSAGE", "doNotDismiss", "action", "it answers doNotDismiss: actionResponses.LIKE"),
            ("REPLY", "MESSAGE", "dismissAndForwardAction", "fallback", "REPLY is not listed, so its default entry"),
            ("DELETE", "INBOX", "dismissAndForwardAction", "contract", "DELETE is listed neither by itself nor under default"),
        ]
        for item in cases {
            let explanation = try await Self.explain(.action(item.act), category: item.category, userText: item.act == "REPLY" ? "Yes" : nil)
            let step = try #require(explanation.steps.first { $0.kind == .contentExtension }, "\(item.act)")
            #expect(step.facts["responseOption"] == .string(item.option))
            #expect(step.facts["responseOptionFrom"] == .string(item.from))
            #expect(step.lines.contains { $0.mark == .decided && $0.text.contains(item.says) }, "\(step.lines.map(\.text))")
            #expect(step.citations.first?.text == "Handles a notification action selected by the user.")
            #expect(step.citations.contains { $0.text.hasPrefix("interfaceDismissed is false only for doNotDismiss") })
        }
        // doNotDismiss: the interface stays and nothing reaches the app, whatever its state.
        let like = try await Self.explain(.action("LIKE"), category: "MESSAGE", state: .notRunning)
        let side = try #require(like.steps.last)
        #expect(side.kind == .appSide)
        #expect(side.verdict == "nothing reaches the app: no callback, no launch")
        #expect(side.lines.first?.text == "not forwarded: ChatThread answered doNotDismiss: only dismissAndForwardAction forwards")
        #expect(like.outcome.contains("the notification's interface stays open"))
    }

    @Test("a media command: the media button, the method it calls, Apple's sentence")
    func media() async throws {
        let explanation = try await Self.explain(.media("pause"), category: "VIDEO")
        let step = try #require(explanation.steps.first { $0.kind == .contentExtension })
        #expect(step.verdict == "VideoPlayer: mediaPause() is called")
        #expect(step.lines.contains { $0.text == "VideoPlayer has a media button (mediaPlayPauseButton overlay)" })
        #expect(step.citations.first?.text == "Tells you to pause playback of your media content.")
    }

    @Test("the app side: the callback per actionHandler, with the rule that chose it, and Apple's sentence on the deprecated method")
    func actionHandlers() async throws {
        let cases: [(handler: ActionHandler, callback: AppCallback?, quotes: String?)] = [
            (.userNotificationCenter, .userNotificationCenter, nil),
            (.legacyWithResponseInfo, .handleActionWithResponseInfo, "Called when your app has been activated by the user selecting an action"),
            (.legacy, .handleAction, "Tells the app delegate to perform the custom action specified by a remote notification."),
            (.none, nil, nil),
        ]
        for item in cases {
            let explanation = try await Self.explain(
                .action("ACK"), category: "PLAIN", yaml: ResponseFixture.yaml(handler: item.handler))
            let side = try #require(explanation.steps.last)
            #expect(side.facts["appCallback"] == (item.callback.map { .string($0.rawValue) } ?? .null), "\(item.handler)")
            #expect(side.facts["appCallbackRule"] == "actionHandler")
            #expect(side.citations.first?.text.hasPrefix("When the action reaches the app (forwarded), appCallback follows actionHandler") == true)
            if let quote = item.quotes {
                #expect(side.citations.contains { $0.text.hasPrefix(quote) && $0.attribution.hasPrefix("Apple, ") }, "\(item.handler)")
            }
            if item.callback == nil {
                #expect(side.lines.contains { $0.text == "no method receives it: reason no-handler" })
                #expect(explanation.outcomeFacts["reason"] == "no-handler")
            }
        }
    }

    @Test("the legacy default-action rule: no action, section 6's foreground row, with its sentences")
    func legacyDefaultAction() async throws {
        let modern = try await Self.explain(
            .action("default"), category: "PLAIN", state: .notRunning,
            yaml: ResponseFixture.yaml(handler: .legacy, delegate: .both))
        let side = try #require(modern.steps.last)
        #expect(side.facts["appCallbackRule"] == "defaultActionAsNotification")
        #expect(side.facts["appCallback"] == .string(AppCallback.fetchCompletionHandler.rawValue))
        #expect(side.lines.contains { $0.mark == .decided && $0.text.hasPrefix("the default action is no action with the legacy action handler legacy") })
        #expect(side.citations.map(\.text).prefix(2) == [
            "With the two legacy handlers, and always in the legacy profile, the default action is no \"action\": it follows the foreground row of section 6 (FCH, else the legacy method).",
            "foreground | — | FCH, else the legacy method if implemented, else null | none | as decided",
        ])
        #expect(side.citations.contains { $0.text.hasPrefix("If your delegate implements both methods") })
        #expect(side.facts["launch"] == "userOpensNotification")
        // In the legacy profile, with any handler: the deprecated method, and the View button's sentence for the launch.
        let legacy = try await Self.explain(
            .action("default"), category: "PLAIN", state: .notRunning,
            yaml: ResponseFixture.yaml(delegate: .both, profile: .legacy))
        let legacySide = try #require(legacy.steps.last)
        #expect(legacySide.facts["appCallback"] == .string(AppCallback.legacy.rawValue))
        #expect(legacySide.lines.contains { $0.text.hasPrefix("the default action is no action in the legacy profile") })
        #expect(legacySide.citations.contains { $0.text.hasPrefix("If the value of the show-view key is false") })
        let handling = try #require(legacy.steps.first { $0.kind == .responseHandling })
        #expect(handling.lines.contains { $0.text == "not presented by a content extension: the legacy profile has none" })
    }

    @Test("opensApp and the launch: the default action and foreground actions open the app; a forwarded response launches an app not running")
    func opensAndLaunch() async throws {
        let cases: [(act: String, state: AppState, opens: String, launch: String?)] = [
            ("default", .notRunning, "opens the app: the default action does", "userOpensNotification"),
            ("VIEW", .forceQuit, "opens the app: the action has the foreground option", "userOpensNotification"),
            ("ACK", .notRunning, "does not open the app: the action has no foreground option", "userSelectsBackgroundAction"),
            ("ACK", .background, "does not open the app: the action has no foreground option", nil),
        ]
        for item in cases {
            let explanation = try await Self.explain(.action(item.act), category: "PLAIN", state: item.state)
            let side = try #require(explanation.steps.last)
            #expect(side.lines.contains { $0.text == item.opens }, "\(item.act)")
            #expect(side.facts["launch"] == (item.launch.map { .string($0) } ?? .null), "\(item.act)")
            #expect(side.citations.contains { $0.text.hasPrefix("opensApp is true for the default action") })
            #expect(side.citations.contains { $0.text.hasPrefix("A forwarded response to an app") } == (item.launch != nil), "\(item.act)")
            #expect(explanation.result.outputs.map(\.kind) == (item.launch == nil ? [.action] : [.action, .launch]))
        }
    }

    @Test("a response's dead letter: the response checks in order, the failed one with the contract's rule, those after it not run")
    func deadLetters() async throws {
        let unknown = try await Self.explain(.action("FORWARD"), category: "MESSAGE")
        #expect(unknown.steps.map(\.kind) == [.validation])
        let validation = unknown.steps[0]
        #expect(validation.lines.map(\.mark) == Array(repeating: .passed, count: 6) + [.decided])
        #expect(validation.facts["failedCheck"] == "action-offered")
        #expect(validation.citations.first?.text.hasPrefix("then UnknownAction: a custom identifier not declared") == true)
        #expect(validation.citations.dropFirst().map(\.text) == [
            "Checks, first failure wins, each a dead letter as in section 5:",
            "Every valid response produces exactly one action record, then at most one launch record; every invalid one exactly one dead letter.",
        ])
        #expect(unknown.outcomeFacts["kind"] == "dead-letter")
        #expect(unknown.outcomeFacts["reason"] == "UnknownAction")
        let suffixed = try await Self.explain(
            .action("LIKE"), category: "MESSAGE", headers: [("apns-topic", ResponseFixture.bundleID + ".voip"), ("app-state", "asleep")])
        let suffixedValidation = suffixed.steps[0]
        #expect(suffixedValidation.facts["failedCheck"] == "topic-bundle-id")
        #expect(suffixedValidation.lines.map(\.mark) == [.passed, .passed, .decided] + Array(repeating: .notReached, count: 4))
    }

    @Test("a valid response whose records do not fit: every check passed, then the outputs that could not be written")
    func outputRejected() async throws {
        let yaml = "kafka: {maxMessageBytes: 16384}\n" + ResponseFixture.yaml()
        let explanation = try await Self.explain(
            .action("REPLY"), category: "MESSAGE", userText: String(repeating: "x", count: 20_000), yaml: yaml)
        #expect(explanation.outcomeFacts["reason"] == "OutputRejected")
        #expect(explanation.steps.map(\.kind) == [.validation, .outputs])
        #expect(explanation.steps[0].facts["passed"] == true)
        #expect(explanation.steps[0].lines.allSatisfy { $0.mark == .passed })
    }

    @Test("as text and as JSON: the response's stages, numbered, quoting their sources")
    func textAndJSON() async throws {
        let response = try await Self.explain(.action("REPLY"), category: "MESSAGE", userText: "Sure", state: .notRunning)
        let explanation = Explanation.response(response)
        let text = explanation.text(input: "a test", width: 100)
        #expect(text.contains("Outcome: Handled by the content extension ChatThread (reason content-extension)"))
        #expect(text.contains("3. Who handles it: row 3 decides: handled by the content extension ChatThread (reason"))
        #expect(text.contains("   → 3. a custom action, presented by a content extension with actionResponses: matches"))
        #expect(text.contains("4. Content extension: ChatThread: didReceive(_:completionHandler:) answers dismissAndForwardAction"))
        #expect(text.contains("       — Apple, UNNotificationContentExtension <https://developer.apple.com/"))
        #expect(text.hasSuffix("Lint: not applicable (it checks requests' payloads).\n"))
        let json = explanation.json(input: ["file": "-"])
        #expect(json[path: ["outcome", "kind"]] == "action")
        #expect(json[path: ["outcome", "launch"]] == "userOpensNotification")
        #expect(json[path: ["steps"]]?.arrayValue?.compactMap { $0[path: ["step"]]?.stringValue }
            == ["validation", "app-state", "response-handling", "content-extension", "app-side"])
        let written = try response.result.outputs.map { try JSONValue(parsing: JSONLines.encode($0)) }
        #expect(json[path: ["outputs"]] == .array(written))
        #expect(json[path: ["warnings"]] == [])
    }
}
