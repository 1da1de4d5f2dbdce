import Dispatcher
import Foundation
import JSON
import Notifications
import Testing

/// SEMANTICS section 6 (badge effect), section 7 (content extensions) and section 8 (profiles).
@Suite("Badge, presentation and the legacy profile (sections 6 to 8)")
struct BadgePresentationProfileTests {
    // MARK: Badge effect

    /// A payload, a profile and the badge effect expected.
    struct BadgeRow: Sendable, CustomTestStringConvertible {
        let payload: JSONValue
        let profile: String
        let expected: BadgeEffect
        var testDescription: String { "\(payload.compactText) (\(profile)) → \(expected.rawValue)" }
    }

    @Test(
        "badge effect rows",
        arguments: [
            BadgeRow(payload: ["aps": ["alert": "Hi", "badge": 5]], profile: "modern", expected: .set),
            BadgeRow(payload: ["aps": ["alert": "Hi", "badge": 0]], profile: "modern", expected: .clear),
            BadgeRow(payload: ["aps": ["alert": "Hi"]], profile: "modern", expected: .unchanged),
            BadgeRow(payload: ["aps": ["alert": "Hi"]], profile: "legacy", expected: .clear),
            BadgeRow(payload: ["aps": ["alert": "Hi", "badge": 2]], profile: "legacy", expected: .set),
        ])
    func badgeEffect(row: BadgeRow) async throws {
        let result = try await Fixture.dispatch("dispatch: {profile: \(row.profile)}", payload: row.payload)
        #expect(result.delivery?.badgeEffect == row.expected)
        #expect(try result.deliveryValue()["badgeEffect"] == .string(row.expected.rawValue))
    }

    @Test("the badge effect is computed on the delivered payload")
    func badgeOnDeliveredPayload() async throws {
        let yaml = Fixture.appYAML(
            """
                serviceExtension: {kind: rewrite, set: {aps.badge: 0}}
            """)
        let result = try await Fixture.dispatch(yaml, payload: Fixture.mutableAlert())
        #expect(result.disposition == .modified)
        #expect(result.delivery?.badgeEffect == .clear)
    }

    // MARK: Presentation

    private let contentExtensionsYAML = """
        apps:
          com.example.app:
            serviceExtension: {kind: rewrite, set: {aps.category: CHAT}}
            categories:
              NEWS: {serviceExtension: none}
              PLAIN: {serviceExtension: none}
            contentExtensions:
              - name: NewsView
                categories: NEWS
                initialContentSizeRatio: 0.5
                defaultContentHidden: true
              - name: ChatView
                categories: [CHAT, GROUP]
                initialContentSizeRatio: 1.25
                overridesDefaultTitle: true
                userInteractionEnabled: true
        """

    @Test("an alert whose category matches a content extension gets its presentation")
    func presentationMatches() async throws {
        let result = try await Fixture.dispatch(
            contentExtensionsYAML, payload: ["aps": ["alert": "Hi", "category": "NEWS"]])
        let presentation = try result.deliveryValue()["presentation"]
        #expect(
            presentation
                == [
                    "contentExtension": "NewsView", "initialContentSizeRatio": 0.5, "defaultContentHidden": true,
                    "overridesDefaultTitle": false, "userInteractionEnabled": false,
                ])
    }

    @Test("presentation follows the delivered payload's category")
    func presentationOfDeliveredCategory() async throws {
        let result = try await Fixture.dispatch(
            contentExtensionsYAML, payload: Fixture.mutableAlert(category: "ANY"))
        #expect(result.disposition == .modified)
        #expect(result.delivery?.presentation?.contentExtension == "ChatView")
        #expect(result.delivery?.presentation?.userInteractionEnabled == true)
    }

    @Test("a category matched by no content extension (or differently cased, or absent) has no presentation",
          arguments: ["PLAIN", "news", nil])
    func noPresentation(category: String?) async throws {
        var aps: JSONObject = ["alert": "Hi"]
        if let category { aps["category"] = .string(category) }
        let result = try await Fixture.dispatch(contentExtensionsYAML, payload: ["aps": .object(aps)])
        #expect(try result.deliveryValue()["presentation"] == .null)
    }

    @Test("only alert pushes get a presentation")
    func presentationOnlyForAlerts() async throws {
        let result = try await Fixture.dispatch(
            contentExtensionsYAML,
            headers: [("apns-topic", Fixture.bundleID), ("apns-push-type", "background")],
            payload: ["aps": ["content-available": 1, "category": "NEWS"]])
        #expect(result.delivery?.presentation == nil)
    }

    // MARK: Legacy profile (section 8)

    private let legacyYAML = """
        dispatch: {profile: legacy}
        apps:
          com.example.app:
            appDelegate: both
            serviceExtension: {kind: rewrite, set: {aps.alert: changed}}
            contentExtensions:
              - {name: NewsView, categories: NEWS, initialContentSizeRatio: 1}
        """

    @Test("legacy: 256-byte payload limit for every push type")
    func legacyPayloadLimit() async throws {
        let long = String(repeating: "x", count: 260)
        for (pushType, topic) in [("alert", Fixture.bundleID), ("voip", Fixture.bundleID + ".voip")] {
            let result = try await Fixture.dispatch(
                legacyYAML, headers: [("apns-topic", topic), ("apns-push-type", pushType)],
                payload: ["aps": ["alert": .string(long)]])
            #expect(result.rejectionReason == .payloadTooLarge)
            #expect(result.header("dlq-status") == "413")
        }
    }

    @Test("legacy: no service extensions and no content extensions")
    func legacyNoExtensions() async throws {
        let result = try await Fixture.dispatch(
            legacyYAML, payload: ["aps": ["alert": "Hi", "mutable-content": 1, "category": "NEWS"]])
        #expect(result.reason == .legacyProfile)
        #expect(try result.deliveryValue()["payload"]?[path: ["aps", "alert"]] == "Hi")
        #expect(try result.deliveryValue()["presentation"] == .null)
    }

    @Test(
        "legacy: an alert whose show-view is false has no View button, so no userOpensNotification launch",
        arguments: [AppState.notRunning, .forceQuit])
    func legacyShowView(state: AppState) async throws {
        func launch(profile: String, showView: JSONValue?) async throws -> LaunchTrigger? {
            var alert: JSONObject = ["body": "Your turn"]
            if let showView { alert["show-view"] = showView }
            let result = try await Fixture.dispatch(
                "dispatch: {profile: \(profile)}", headers: [("apns-topic", Fixture.bundleID), ("app-state", state.rawValue)],
                payload: ["aps": ["alert": .object(alert)]])
            return result.launchTrigger
        }
        #expect(try await launch(profile: "legacy", showView: false) == nil)
        #expect(try await launch(profile: "legacy", showView: true) == .userOpensNotification)
        #expect(try await launch(profile: "legacy", showView: .none) == .userOpensNotification)
        // iOS 8 and later ignore the key: the modern profile launches either way.
        #expect(try await launch(profile: "modern", showView: false) == .userOpensNotification)
    }

    @Test("legacy: no PushKit; voip follows the alert and background rows")
    func legacyNoPushKit() async throws {
        let result = try await Fixture.dispatch(
            legacyYAML,
            headers: [("apns-topic", Fixture.bundleID + ".voip"), ("apns-push-type", "voip"), ("app-state", "notRunning")],
            payload: ["aps": ["alert": "Call"]])
        #expect(result.delivery?.appCallback == nil)
        #expect(result.launchTrigger == .userOpensNotification)
    }

    @Test("legacy: content-available has no effect (no background delivery, nothing silent)")
    func legacyContentAvailable() async throws {
        let notRunning = try await Fixture.dispatch(
            legacyYAML,
            headers: [("apns-topic", Fixture.bundleID), ("apns-push-type", "background"), ("app-state", "notRunning")],
            payload: ["aps": ["content-available": 1]])
        #expect(notRunning.launchTrigger == nil)
        #expect(notRunning.delivery?.appCallback == nil)
        let forceQuit = try await Fixture.dispatch(
            legacyYAML,
            headers: [("apns-topic", Fixture.bundleID), ("apns-push-type", "background"), ("app-state", "forceQuit")],
            payload: ["aps": ["content-available": 1]])
        #expect(forceQuit.disposition == .original)
        let background = try await Fixture.dispatch(
            legacyYAML,
            headers: [("apns-topic", Fixture.bundleID), ("apns-push-type", "background"), ("app-state", "background")],
            payload: ["aps": ["content-available": 1]])
        #expect(background.delivery?.appCallback == nil)
    }

    @Test("legacy: only the deprecated callback, in the foreground, if implemented", arguments: [
        (AppDelegateMethods.both, AppCallback.legacy as AppCallback?),
        (.legacy, .legacy),
        (.fetchCompletionHandler, nil),
        (.none, nil),
    ])
    func legacyCallback(delegate: AppDelegateMethods, expected: AppCallback?) async throws {
        let result = try await Fixture.dispatch(
            "dispatch: {profile: legacy}\napps: {com.example.app: {appDelegate: \(delegate.rawValue)}}",
            headers: [("apns-topic", Fixture.bundleID), ("app-state", "foreground")],
            payload: ["aps": ["alert": "Hi", "content-available": 1]])
        #expect(result.delivery?.appCallback == expected)
    }
}
