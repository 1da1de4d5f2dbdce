import Dispatcher
import JSON
import Notifications
import Testing

/// SEMANTICS section 3: may a service extension run? One test per row of the table.
@Suite("Gating (section 3)")
struct GatingTests {
    private let yaml = Fixture.appYAML(Fixture.subtitleExtension)

    @Test("row 1: legacy profile → original, legacy-profile")
    func legacyProfile() async throws {
        let result = try await Fixture.dispatch(
            Fixture.appYAML(Fixture.subtitleExtension, dispatch: "  profile: legacy"),
            payload: ["aps": ["alert": "Hi", "mutable-content": 1]])
        #expect(result.disposition == .original)
        #expect(result.reason == .legacyProfile)
        #expect(result.extensionName == nil)
    }

    @Test("row 2: push type other than alert → original, push-type-not-modifiable")
    func pushTypeNotModifiable() async throws {
        let result = try await Fixture.dispatch(
            yaml, headers: [("apns-topic", Fixture.bundleID), ("apns-push-type", "background")],
            payload: ["aps": ["content-available": 1, "mutable-content": 1]])
        #expect(result.disposition == .original)
        #expect(result.reason == .pushTypeNotModifiable)
    }

    @Test(
        "row 3: no alert text (silent, sound-only, badge-only) → original, no-alert",
        arguments: [
            ["aps": ["content-available": 1, "mutable-content": 1]] as JSONValue,
            ["aps": ["sound": "ping.aiff", "mutable-content": 1]],
            ["aps": ["badge": 4, "mutable-content": 1]],
            ["aps": ["alert": "", "mutable-content": 1]],
            ["aps": ["alert": ["title": ""], "mutable-content": 1]],
        ])
    func noAlert(payload: JSONValue) async throws {
        let result = try await Fixture.dispatch(
            yaml, headers: [("apns-topic", Fixture.bundleID), ("apns-push-type", "alert")], payload: payload)
        #expect(result.disposition == .original)
        #expect(result.reason == .noAlert)
    }

    @Test(
        "row 4: mutable-content not 1 → original, not-mutable",
        arguments: [
            ["aps": ["alert": "Hi"]] as JSONValue,
            ["aps": ["alert": "Hi", "mutable-content": 0]],
            ["aps": ["alert": "Hi", "mutable-content": 2]],
        ])
    func notMutable(payload: JSONValue) async throws {
        let result = try await Fixture.dispatch(yaml, payload: payload)
        #expect(result.disposition == .original)
        #expect(result.reason == .notMutable)
    }

    @Test("row 5: no extension for the app and category → original, no-extension")
    func noExtension() async throws {
        let result = try await Fixture.dispatch(Fixture.appYAML(), payload: Fixture.mutableAlert())
        #expect(result.disposition == .original)
        #expect(result.reason == .noExtension)
        #expect(try result.deliveryValue()["extension"] == .null)
    }

    @Test("row 5: no apps configured at all → original, no-extension")
    func noAppsConfigured() async throws {
        let result = try await Fixture.dispatch("", payload: Fixture.mutableAlert())
        #expect(result.reason == .noExtension)
    }

    @Test("row 6: otherwise the extension runs")
    func extensionRuns() async throws {
        let result = try await Fixture.dispatch(yaml, payload: Fixture.mutableAlert())
        #expect(result.disposition == .modified)
        #expect(result.reason == .extension)
        #expect(result.extensionName == "subtitle")
    }

    @Test("the rules apply in order: legacy wins over push type, push type over no-alert, no-alert over not-mutable")
    func firstRuleWins() async throws {
        let legacy = try await Fixture.dispatch(
            Fixture.appYAML(Fixture.subtitleExtension, dispatch: "  profile: legacy"),
            headers: [("apns-topic", Fixture.bundleID), ("apns-push-type", "background")],
            payload: ["aps": ["content-available": 1]])
        #expect(legacy.reason == .legacyProfile)
        let background = try await Fixture.dispatch(
            yaml, headers: [("apns-topic", Fixture.bundleID), ("apns-push-type", "background")],
            payload: ["aps": ["content-available": 1]])
        #expect(background.reason == .pushTypeNotModifiable)
        let silent = try await Fixture.dispatch(
            yaml, headers: [("apns-topic", Fixture.bundleID), ("apns-push-type", "alert")],
            payload: ["aps": ["content-available": 1]])
        #expect(silent.reason == .noAlert)
    }
}
