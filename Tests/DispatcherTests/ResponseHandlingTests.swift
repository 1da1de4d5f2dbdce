import Dispatcher
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// SEMANTICS section 10: who handles a response and what follows; one case per row of the table,
/// per action handler and per launch rule, in both profiles.
@Suite("Actions and responses: handling (section 10)")
struct ResponseHandlingTests {
    typealias Act = ResponseFixture.Act

    /// What the action record must say.
    struct Expected: Sendable {
        var handledBy: HandledBy
        var contentExtension: String? = nil
        var extensionCallback: ExtensionCallback? = nil
        var responseOption: ResponseOption? = nil
        var interfaceDismissed = true
        var forwardedToApp: Bool
        var appCallback: AppCallback? = nil
        var opensApp = false
        var reason: ActionReason
        var launch: LaunchTrigger? = nil
        var actionOptions: [ActionOption] = []
    }

    /// One response and the handling expected.
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        var profile: Profile = .modern
        var handler: ActionHandler = .userNotificationCenter
        var delegate: AppDelegateMethods = .fetchCompletionHandler
        var state: AppState = .foreground
        let category: String?
        let act: Act
        var userText: String? = nil
        let expected: Expected

        var testDescription: String { name }
    }

    static let tableRows: [Row] = [
        // Row 1: media commands go to the content extension's media methods.
        Row(
            name: "1: play → mediaPlay(), the interface stays", category: "VIDEO", act: .media("play"),
            expected: Expected(
                handledBy: .contentExtension, contentExtension: "VideoPlayer", extensionCallback: .mediaPlay,
                interfaceDismissed: false, forwardedToApp: false, reason: .mediaControl)),
        Row(
            name: "1: pause → mediaPause(), no launch even when not running", state: .notRunning, category: "VIDEO",
            act: .media("pause"),
            expected: Expected(
                handledBy: .contentExtension, contentExtension: "VideoPlayer", extensionCallback: .mediaPause,
                interfaceDismissed: false, forwardedToApp: false, reason: .mediaControl)),
        // Row 2: a dismissal the category does not report reaches nobody.
        Row(
            name: "2: dismiss without customDismissAction is not reported", state: .notRunning, category: "VIDEO",
            act: .action("dismiss"),
            expected: Expected(handledBy: .none, forwardedToApp: false, reason: .dismissNotReported)),
        Row(
            name: "2: dismiss of a notification without category is not reported", category: nil,
            act: .action("dismiss"),
            expected: Expected(handledBy: .none, forwardedToApp: false, reason: .dismissNotReported)),
        // Row 3: custom actions of a category presented by a content extension with actionResponses.
        Row(
            name: "3: doNotDismiss keeps the interface open and goes no further", state: .notRunning,
            category: "MESSAGE", act: .action("LIKE"),
            expected: Expected(
                handledBy: .contentExtension, contentExtension: "ChatThread", extensionCallback: .didReceive,
                responseOption: .doNotDismiss, interfaceDismissed: false, forwardedToApp: false,
                reason: .contentExtension)),
        Row(
            name: "3: dismiss closes the interface and goes no further", state: .forceQuit, category: "MESSAGE",
            act: .action("ARCHIVE"),
            expected: Expected(
                handledBy: .contentExtension, contentExtension: "ChatThread", extensionCallback: .didReceive,
                responseOption: .dismiss, forwardedToApp: false, reason: .contentExtension,
                actionOptions: [.destructive])),
        Row(
            name: "3: the default entry forwards a text reply; foreground opens the app", state: .notRunning,
            category: "MESSAGE", act: .action("REPLY"), userText: "On my way",
            expected: Expected(
                handledBy: .contentExtension, contentExtension: "ChatThread", extensionCallback: .didReceive,
                responseOption: .dismissAndForwardAction, forwardedToApp: true, appCallback: .userNotificationCenter,
                opensApp: true, reason: .contentExtension, launch: .userOpensNotification, actionOptions: [.foreground])),
        Row(
            name: "3: an action listed neither by id nor default is forwarded (decision)", state: .forceQuit,
            category: "INBOX", act: .action("DELETE"),
            expected: Expected(
                handledBy: .contentExtension, contentExtension: "Inbox", extensionCallback: .didReceive,
                responseOption: .dismissAndForwardAction, forwardedToApp: true, appCallback: .userNotificationCenter,
                reason: .contentExtension, launch: .userSelectsBackgroundAction, actionOptions: [.destructive])),
        // Row 4: everything else goes to the app.
        Row(
            name: "4: the default action opens the app, even through a content extension", state: .notRunning,
            category: "MESSAGE", act: .action("default"),
            expected: Expected(
                handledBy: .app, forwardedToApp: true, appCallback: .userNotificationCenter, opensApp: true,
                reason: .deliveredToApp, launch: .userOpensNotification)),
        Row(
            name: "4: a reported dismissal reaches the app in the background", state: .forceQuit, category: "MESSAGE",
            act: .action("dismiss"),
            expected: Expected(
                handledBy: .app, forwardedToApp: true, appCallback: .userNotificationCenter, reason: .deliveredToApp,
                launch: .userSelectsBackgroundAction)),
        Row(
            name: "4: a content extension without actionResponses passes actions on", state: .background,
            category: "VIDEO", act: .action("OPEN"),
            expected: Expected(
                handledBy: .app, forwardedToApp: true, appCallback: .userNotificationCenter, opensApp: true,
                reason: .deliveredToApp, actionOptions: [.foreground])),
        Row(
            name: "4: a category no content extension presents", state: .suspended, category: "PLAIN",
            act: .action("VIEW"),
            expected: Expected(
                handledBy: .app, forwardedToApp: true, appCallback: .userNotificationCenter, opensApp: true,
                reason: .deliveredToApp, actionOptions: [.foreground, .authenticationRequired])),
        Row(
            name: "4: a background action of an app not running launches it in the background", state: .notRunning,
            category: "PLAIN", act: .action("ACK"),
            expected: Expected(
                handledBy: .app, forwardedToApp: true, appCallback: .userNotificationCenter, reason: .deliveredToApp,
                launch: .userSelectsBackgroundAction)),
    ]

    static let handlerRows: [Row] = [
        Row(
            name: "legacyWithResponseInfo: actions with their typed text", handler: .legacyWithResponseInfo,
            category: "PLAIN", act: .action("ACK"),
            expected: Expected(
                handledBy: .app, forwardedToApp: true, appCallback: .handleActionWithResponseInfo,
                reason: .deliveredToApp)),
        Row(
            name: "legacyWithResponseInfo: the default action follows the foreground row (FCH)",
            handler: .legacyWithResponseInfo, state: .notRunning, category: "PLAIN", act: .action("default"),
            expected: Expected(
                handledBy: .app, forwardedToApp: true, appCallback: .fetchCompletionHandler, opensApp: true,
                reason: .deliveredToApp, launch: .userOpensNotification)),
        Row(
            name: "legacy: actions without response info; forwarded by a content extension too", handler: .legacy,
            category: "MESSAGE", act: .action("REPLY"), userText: "ok",
            expected: Expected(
                handledBy: .contentExtension, contentExtension: "ChatThread", extensionCallback: .didReceive,
                responseOption: .dismissAndForwardAction, forwardedToApp: true, appCallback: .handleAction,
                opensApp: true, reason: .contentExtension, actionOptions: [.foreground])),
        Row(
            name: "legacy: the default action, FCH not implemented → the deprecated method", handler: .legacy,
            delegate: .legacy, category: nil, act: .action("default"),
            expected: Expected(
                handledBy: .app, forwardedToApp: true, appCallback: .legacy, opensApp: true, reason: .deliveredToApp)),
        Row(
            name: "legacy: the default action, no remote-notification method → no-handler", handler: .legacy,
            delegate: .none, category: "PLAIN", act: .action("default"),
            expected: Expected(handledBy: .app, forwardedToApp: true, opensApp: true, reason: .noHandler)),
        Row(
            name: "none: an action reaches the app, no method takes it; it still launches the app", handler: .none,
            state: .forceQuit, category: "PLAIN", act: .action("ACK"),
            expected: Expected(
                handledBy: .app, forwardedToApp: true, reason: .noHandler, launch: .userSelectsBackgroundAction)),
        Row(
            name: "none: the default action, not a legacy handler → no-handler", handler: .none, category: "PLAIN",
            act: .action("default"),
            expected: Expected(handledBy: .app, forwardedToApp: true, opensApp: true, reason: .noHandler)),
        Row(
            name: "none: forwarded by a content extension → no-handler", handler: .none, category: "INBOX",
            act: .action("DELETE"),
            expected: Expected(
                handledBy: .contentExtension, contentExtension: "Inbox", extensionCallback: .didReceive,
                responseOption: .dismissAndForwardAction, forwardedToApp: true, reason: .noHandler,
                actionOptions: [.destructive])),
        Row(
            name: "none: a content extension's answer is unaffected", handler: .none, category: "INBOX",
            act: .action("READ"),
            expected: Expected(
                handledBy: .contentExtension, contentExtension: "Inbox", extensionCallback: .didReceive,
                responseOption: .doNotDismiss, interfaceDismissed: false, forwardedToApp: false,
                reason: .contentExtension)),
    ]

    /// The legacy profile: only the default action exists, and it always follows the foreground row.
    static let legacyRows: [Row] = ActionHandler.allCases.flatMap { handler in
        [
            Row(
                name: "legacy profile, \(handler.rawValue): the default action → the deprecated method",
                profile: .legacy, handler: handler, delegate: .both, state: .notRunning, category: "MESSAGE",
                act: .action("default"),
                expected: Expected(
                    handledBy: .app, forwardedToApp: true, appCallback: .legacy, opensApp: true,
                    reason: .deliveredToApp, launch: .userOpensNotification)),
            Row(
                name: "legacy profile, \(handler.rawValue): FCH does not exist → no-handler", profile: .legacy,
                handler: handler, delegate: .fetchCompletionHandler, state: .background, category: nil,
                act: .action("default"),
                expected: Expected(handledBy: .app, forwardedToApp: true, opensApp: true, reason: .noHandler)),
        ]
    }

    @Test("the table's rows, each recorded as the row that decided (explain reads it)", arguments: tableRows)
    func tableRow(_ row: Row) throws {
        try check(row)
        let result = try ResponseFixture.respond(row.act, category: row.category, userText: row.userText, state: row.state)
        let number = try #require(Int(row.name.prefix { $0.isNumber }))
        #expect(result.handledResponse?.handling.row.number == number)
    }

    @Test("each action handler", arguments: handlerRows)
    func handlerRow(_ row: Row) throws {
        try check(row)
    }

    @Test("the legacy profile, each action handler", arguments: legacyRows)
    func legacyRow(_ row: Row) throws {
        try check(row)
    }

    @Test("a forwarded response launches the app only when notRunning or forceQuit", arguments: AppState.allCases)
    func launchByState(_ state: AppState) throws {
        let relaunch = state == .notRunning || state == .forceQuit
        let open = try ResponseFixture.respond(.action("VIEW"), category: "PLAIN", state: state)
        #expect(open.launchTrigger == (relaunch ? .userOpensNotification : nil))
        let background = try ResponseFixture.respond(.action("ACK"), category: "PLAIN", state: state)
        #expect(background.launchTrigger == (relaunch ? .userSelectsBackgroundAction : nil))
        let kept = try ResponseFixture.respond(.action("LIKE"), category: "MESSAGE", state: state)
        #expect(kept.launchTrigger == nil, "not forwarded: nothing reaches the app")
        #expect(try kept.actionValue()["appState"] == .string(state.rawValue))
    }

    @Test("the app's state: the header, else the app-states table, else defaultAppState, else notRunning")
    func appState() throws {
        let dispatcher = try Dispatcher(
            configuration: Configuration(yaml: ResponseFixture.yaml()), registry: ExtensionRegistry())
        let value = ResponseFixture.value(.action("ACK"), payload: ResponseFixture.payload(category: "PLAIN"))
        let plain = TestRecord(
            headers: [("apns-topic", ResponseFixture.bundleID)], value: value.serialized(), topic: TestRecord.responsesTopic
        ).requestRecord
        let fallback = dispatcher.respond(plain, appStates: NoAppStates(), receivedAt: Date()).handledResponse
        #expect(fallback?.appState == .notRunning && fallback?.appStateSource == .fallback)
        let table = FixedAppStates([TestRecord.token(): .background])
        let fromTable = dispatcher.respond(plain, appStates: table, receivedAt: Date()).handledResponse
        #expect(fromTable?.appState == .background && fromTable?.appStateSource == .appStatesTable)
        let header = TestRecord(
            headers: [("apns-topic", ResponseFixture.bundleID), ("App-State", "forceQuit")], value: value.serialized(),
            topic: TestRecord.responsesTopic
        ).requestRecord
        let fromHeader = dispatcher.respond(header, appStates: table, receivedAt: Date()).handledResponse
        #expect(fromHeader?.appState == .forceQuit && fromHeader?.appStateSource == .header)
        let withDefault = try Dispatcher(
            configuration: Configuration(yaml: ResponseFixture.yaml() + "\n    defaultAppState: suspended"),
            registry: ExtensionRegistry())
        let fromDefault = withDefault.respond(plain, appStates: NoAppStates(), receivedAt: Date()).handledResponse
        #expect(fromDefault?.appState == .suspended && fromDefault?.appStateSource == .appDefault)
    }

    /// Decides `row` and compares every field of the action record (and the launch).
    private func check(_ row: Row) throws {
        let result = try ResponseFixture.respond(
            row.act, category: row.category, userText: row.userText, state: row.state,
            yaml: ResponseFixture.yaml(handler: row.handler, delegate: row.delegate, profile: row.profile))
        let value = try result.actionValue()
        let expected = row.expected
        func text(_ raw: String?) -> JSONValue { raw.map(JSONValue.string) ?? .null }
        #expect(value["handledBy"] == .string(expected.handledBy.rawValue))
        #expect(value["contentExtension"] == text(expected.contentExtension))
        #expect(value["extensionCallback"] == text(expected.extensionCallback?.rawValue))
        #expect(value["responseOption"] == text(expected.responseOption?.rawValue))
        #expect(value["interfaceDismissed"] == .bool(expected.interfaceDismissed))
        #expect(value["forwardedToApp"] == .bool(expected.forwardedToApp))
        #expect(value["appCallback"] == text(expected.appCallback?.rawValue))
        #expect(value["opensApp"] == .bool(expected.opensApp))
        #expect(value["reason"] == .string(expected.reason.rawValue))
        #expect(value["actionOptions"] == .array(expected.actionOptions.map { .string($0.rawValue) }))
        #expect(value["category"] == text(row.category))
        #expect(value["userText"] == text(row.userText))
        #expect(value["appState"] == .string(row.state.rawValue))
        #expect(result.launchTrigger == expected.launch)
        #expect(result.outputs.map(\.kind) == (expected.launch == nil ? [.action] : [.action, .launch]))
        if let launch = try result.launchValue() {
            #expect(launch["trigger"] == text(expected.launch?.rawValue))
        }
    }
}
