import Dispatcher
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// SEMANTICS section 6: the app's state, callbacks and launches; one test case per table row.
@Suite("App state, callbacks and launches (section 6)")
struct AppSideTests {
    /// One row of the alert/background table, with the payload and delegate that exercise it.
    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let state: AppState
        let delegate: AppDelegateMethods
        let pushType: PushType
        let payload: JSONValue
        let callback: AppCallback?
        let launch: LaunchTrigger?
        let discarded: Bool

        var testDescription: String { name }
    }

    static let silent: JSONValue = ["aps": ["content-available": 1]]
    static let alert: JSONValue = ["aps": ["alert": "Hello"]]
    static let alertAndContentAvailable: JSONValue = ["aps": ["alert": "Hello", "content-available": 1]]
    static let badgeOnly: JSONValue = ["aps": ["badge": 3]]

    static let rows: [Row] = [
        Row(name: "foreground: FCH", state: .foreground, delegate: .fetchCompletionHandler, pushType: .alert,
            payload: alert, callback: .fetchCompletionHandler, launch: nil, discarded: false),
        Row(name: "foreground: both → FCH only", state: .foreground, delegate: .both, pushType: .alert,
            payload: alert, callback: .fetchCompletionHandler, launch: nil, discarded: false),
        Row(name: "foreground: else the legacy method", state: .foreground, delegate: .legacy, pushType: .alert,
            payload: alert, callback: .legacy, launch: nil, discarded: false),
        Row(name: "foreground: else null", state: .foreground, delegate: .none, pushType: .alert,
            payload: alert, callback: nil, launch: nil, discarded: false),
        Row(name: "background, content-available: FCH", state: .background, delegate: .fetchCompletionHandler,
            pushType: .background, payload: silent, callback: .fetchCompletionHandler, launch: nil, discarded: false),
        Row(name: "suspended, content-available: FCH", state: .suspended, delegate: .both,
            pushType: .background, payload: silent, callback: .fetchCompletionHandler, launch: nil, discarded: false),
        Row(name: "background, content-available, no FCH: null", state: .background, delegate: .legacy,
            pushType: .background, payload: silent, callback: nil, launch: nil, discarded: false),
        Row(name: "background, otherwise: null", state: .background, delegate: .fetchCompletionHandler,
            pushType: .alert, payload: alert, callback: nil, launch: nil, discarded: false),
        Row(name: "suspended, otherwise: null", state: .suspended, delegate: .both,
            pushType: .alert, payload: alert, callback: nil, launch: nil, discarded: false),
        Row(name: "notRunning, content-available: FCH + backgroundDelivery", state: .notRunning,
            delegate: .fetchCompletionHandler, pushType: .background, payload: silent,
            callback: .fetchCompletionHandler, launch: .backgroundDelivery, discarded: false),
        Row(name: "notRunning, content-available, no FCH: null + backgroundDelivery", state: .notRunning,
            delegate: .none, pushType: .background, payload: silent, callback: nil, launch: .backgroundDelivery,
            discarded: false),
        Row(name: "notRunning, content-available and alert: first row wins", state: .notRunning,
            delegate: .fetchCompletionHandler, pushType: .alert, payload: alertAndContentAvailable,
            callback: .fetchCompletionHandler, launch: .backgroundDelivery, discarded: false),
        Row(name: "notRunning, alert text: userOpensNotification", state: .notRunning, delegate: .fetchCompletionHandler,
            pushType: .alert, payload: alert, callback: nil, launch: .userOpensNotification, discarded: false),
        Row(name: "notRunning, otherwise: nothing", state: .notRunning, delegate: .fetchCompletionHandler,
            pushType: .alert, payload: badgeOnly, callback: nil, launch: nil, discarded: false),
        Row(name: "forceQuit, silent: discarded app-force-quit", state: .forceQuit, delegate: .fetchCompletionHandler,
            pushType: .background, payload: silent, callback: nil, launch: nil, discarded: true),
        Row(name: "forceQuit, alert text: userOpensNotification", state: .forceQuit, delegate: .fetchCompletionHandler,
            pushType: .alert, payload: alertAndContentAvailable, callback: nil, launch: .userOpensNotification,
            discarded: false),
        Row(name: "forceQuit, otherwise: nothing", state: .forceQuit, delegate: .fetchCompletionHandler,
            pushType: .alert, payload: badgeOnly, callback: nil, launch: nil, discarded: false),
    ]

    @Test("alert and background rows", arguments: rows)
    func alertAndBackgroundRow(_ row: Row) async throws {
        let yaml = """
            apps:
              com.example.app:
                appDelegate: \(row.delegate.rawValue)
            """
        let result = try await Fixture.dispatch(
            yaml,
            headers: [
                ("apns-topic", Fixture.bundleID), ("apns-push-type", row.pushType.rawValue),
                ("apns-priority", "5"), ("app-state", row.state.rawValue),
            ],
            payload: row.payload)
        let value = try result.deliveryValue()
        #expect(value["appState"] == .string(row.state.rawValue))
        #expect(value["appCallback"] == (row.callback.map { .string($0.rawValue) } ?? .null))
        #expect(result.launchTrigger == row.launch)
        #expect(result.outputs.count == (row.launch == nil ? 1 : 2))
        if row.discarded {
            #expect(result.disposition == .discarded)
            #expect(result.reason == .appForceQuit)
            #expect(value["badgeEffect"] == "unchanged")
            #expect(value["presentation"] == .null)
            #expect(value["extension"] == .null)
        } else {
            #expect(result.disposition == .original)
        }
    }

    @Test("the conditions read the original payload, not what an extension made of it")
    func conditionsOnOriginalPayload() async throws {
        let yaml = """
            apps:
              com.example.app:
                serviceExtension: {kind: rewrite, set: {aps.content-available: 1}}
            """
        let result = try await Fixture.dispatch(
            yaml, headers: [("apns-topic", Fixture.bundleID), ("app-state", "notRunning")],
            payload: Fixture.mutableAlert())
        #expect(result.disposition == .modified)
        #expect(result.launchTrigger == .userOpensNotification)
        let launch = try #require(try result.launchValue())
        #expect(launch["launchOptions"]?[path: ["remoteNotification", "aps", "content-available"]] == 1)
    }

    @Test("voip: PushKit callback in every state; backgroundDelivery when notRunning or forceQuit", arguments: AppState.allCases)
    func voip(state: AppState) async throws {
        let result = try await Fixture.dispatch(
            "apps: {com.example.app: {appDelegate: none}}",
            headers: [
                ("apns-topic", "com.example.app.voip"), ("apns-push-type", "voip"), ("app-state", state.rawValue),
            ],
            payload: ["aps": [:], "caller": "Bob"])
        #expect(result.delivery?.appCallback == .pushKit)
        let relaunch = state == .notRunning || state == .forceQuit
        #expect(result.launchTrigger == (relaunch ? .backgroundDelivery : nil))
        #expect(result.disposition == .original)
        #expect(result.reason == .pushTypeNotModifiable)
    }

    @Test(
        "every other push type: no callback, no launch",
        arguments: [PushType.complication, .fileprovider, .location, .liveactivity, .pushtotalk, .widgets, .controls, .mdm])
    func otherPushTypes(pushType: PushType) async throws {
        let topic = pushType == .mdm ? "com.apple.mgmt.External.1234" : Fixture.bundleID + (pushType.topicSuffix ?? "")
        for state in [AppState.notRunning, .foreground, .forceQuit] {
            let result = try await Fixture.dispatch(
                "apps: {com.example.app: {}}",
                headers: [("apns-topic", topic), ("apns-push-type", pushType.rawValue), ("app-state", state.rawValue)],
                payload: pushType == .mdm ? ["mdm": "magic", "aps": ["content-available": 1]] : ["aps": ["content-available": 1]])
            #expect(result.delivery?.appCallback == nil)
            #expect(result.launchTrigger == nil)
            #expect(result.disposition == .original)
            #expect(result.outputs.count == 1)
        }
    }

    @Test("app state: the app-state header wins over the table and the default")
    func stateFromHeader() async throws {
        let result = try await Fixture.dispatch(
            "apps: {com.example.app: {defaultAppState: suspended}}",
            headers: [("apns-topic", Fixture.bundleID), ("app-state", "foreground")], payload: Self.alert,
            appStates: FixedAppStates([TestRecord.token(): .background]))
        #expect(result.delivery?.appState == .foreground)
    }

    @Test("app state: the app-states table wins over defaultAppState")
    func stateFromTable() async throws {
        let result = try await Fixture.dispatch(
            "apps: {com.example.app: {defaultAppState: suspended}}", payload: Self.alert,
            appStates: FixedAppStates([TestRecord.token(): .background]))
        #expect(result.delivery?.appState == .background)
    }

    @Test("app state: defaultAppState when neither header nor table says")
    func stateFromDefault() async throws {
        let result = try await Fixture.dispatch(
            "apps: {com.example.app: {defaultAppState: suspended}}", payload: Self.alert,
            appStates: FixedAppStates([TestRecord.token(0x01): .background]))
        #expect(result.delivery?.appState == .suspended)
    }

    @Test("app state: notRunning when nothing says")
    func stateNotRunning() async throws {
        let result = try await Fixture.dispatch("", payload: Self.alert)
        #expect(result.delivery?.appState == .notRunning)
        #expect(result.launchTrigger == .userOpensNotification)
    }
}
