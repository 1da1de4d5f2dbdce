import Dispatcher
import DispatcherTools
import Foundation
import Notifications
import Records
import ServiceExtensions
import Testing
import TestSupport

/// `PayloadLint`: each warning fires on the valid-but-likely-wrong payload it is about, with its
/// reason and fix, and stays quiet on the nearest correct one.
@Suite("Lint")
struct LintTests {
    /// An app with an attachment step (media at `media-url`, or `fcm_options.image` for the IMAGE
    /// category) and two content extensions.
    static let yaml = """
        apps:
          com.example.app:
            serviceExtension: {kind: attachment, store: /tmp/nd-lint-unused}
            categories:
              IMAGE:
                serviceExtension: {kind: attachment, urlPath: fcm_options.image, store: /tmp/nd-lint-unused}
            contentExtensions:
              - {name: NewsPreview, categories: [NEWS, LIVE], initialContentSizeRatio: 1}
              - {name: Gallery, categories: IMAGE, initialContentSizeRatio: 0.5}
          com.example.plain: {}
        """

    /// The warnings for `payload` sent with `headers`, under `yaml`.
    static func warnings(
        _ payload: String, headers: [(String, String)] = [("apns-topic", "com.example.app")], yaml: String = yaml
    ) throws -> [LintWarning] {
        let configuration = try Configuration(yaml: yaml)
        let record = TestRecord(headers: headers, value: Array(payload.utf8)).requestRecord
        let validator = RequestValidator(profile: configuration.dispatch.profile, allowedBundleIDs: Set(configuration.apps.keys))
        let request = try validator.validate(record).get()
        let lint = PayloadLint(configuration: configuration, mediaURLPath: BuiltInExtensions.mediaURLPath)
        return lint.warnings(for: request, payloadBytes: payload.utf8.count)
    }

    /// The codes of the warnings for `payload`.
    static func codes(_ payload: String, headers: [(String, String)] = [("apns-topic", "com.example.app")], yaml: String = yaml) throws
        -> [LintWarning.Code]
    {
        try warnings(payload, headers: headers, yaml: yaml).map(\.code)
    }

    @Test("mutable-content 1 without alert text: no extension runs for it")
    func mutableWithoutAlert() throws {
        let warning = try #require(try Self.warnings(#"{"aps":{"mutable-content":1,"badge":3}}"#).first)
        #expect(warning.code == .mutableContentWithoutAlert)
        #expect(warning.message.contains("no-alert"))
        #expect(warning.fix.contains("Add alert text"))
        #expect(warning.citations.first?.text == "You can’t modify silent notifications or those that only play a sound or badge the app’s icon.")
        #expect(try Self.codes(#"{"aps":{"mutable-content":1,"alert":"Hi"}}"#).isEmpty)
        #expect(try Self.codes(#"{"aps":{"mutable-content":1,"alert":{"title":""}}}"#) == [.mutableContentWithoutAlert])
    }

    @Test("a silent payload sent as an alert at priority 10, which background pushes may not have")
    func silentAtPriority10() throws {
        // An empty alert makes the push type alert (inferred), with the default priority 10.
        let inferred = try Self.warnings(#"{"aps":{"alert":"","content-available":1}}"#)
        #expect(inferred.map(\.code) == [.silentPushAtPriority10])
        #expect(inferred.first?.message.contains("inferred from the aps.alert key") == true)
        #expect(inferred.first?.fix.contains("apns-push-type: background and apns-priority: 5") == true)
        let given = [("apns-topic", "com.example.app"), ("apns-push-type", "alert"), ("apns-priority", "10")]
        #expect(try Self.codes(#"{"aps":{"content-available":1}}"#, headers: given) == [.silentPushAtPriority10])
        // Priority 5, a badge (not silent), or the background push type: nothing to say.
        let five = [("apns-topic", "com.example.app"), ("apns-push-type", "alert"), ("apns-priority", "5")]
        #expect(try Self.codes(#"{"aps":{"content-available":1}}"#, headers: five).isEmpty)
        #expect(try Self.codes(#"{"aps":{"content-available":1,"badge":1}}"#, headers: given).isEmpty)
        #expect(try Self.codes(#"{"aps":{"content-available":1}}"#).isEmpty)
    }

    @Test("a media URL over plain HTTP, or without a file extension, where the app's attachment steps read it")
    func mediaURL() throws {
        #expect(try Self.codes(#"{"aps":{"alert":"Hi"},"media-url":"http://cdn.example.com/a.jpg"}"#) == [.mediaURLNotHTTPS])
        #expect(
            try Self.codes(#"{"aps":{"alert":"Hi"},"media-url":"https://cdn.example.com/images/42?size=large"}"#)
                == [.mediaURLWithoutFileExtension])
        #expect(try Self.codes(#"{"aps":{"alert":"Hi"},"media-url":"http://cdn.example.com/"}"#) == [.mediaURLNotHTTPS, .mediaURLWithoutFileExtension])
        #expect(try Self.codes(#"{"aps":{"alert":"Hi"},"media-url":"https://cdn.example.com/a.jpg?size=large"}"#).isEmpty)
        // The category's step reads another path; every step of the app counts.
        let nested = try Self.warnings(#"{"aps":{"alert":"Hi","category":"IMAGE"},"fcm_options":{"image":"http://cdn.example.com/b.png"}}"#)
        #expect(nested.map(\.code) == [.mediaURLNotHTTPS])
        #expect(nested.first?.message.contains("fcm_options.image") == true)
        // An app without attachment steps: the key means nothing to the product.
        #expect(try Self.codes(#"{"aps":{"alert":"Hi"},"media-url":"http://x.example/a"}"#, headers: [("apns-topic", "com.example.plain")]).isEmpty)
    }

    @Test("a payload a few bytes under its limit (the last 1/32 of it)")
    func nearLimit() throws {
        func payload(_ size: Int) -> String {
            let frame = #"{"aps":{"alert":""}}"#
            return #"{"aps":{"alert":""# + String(repeating: "x", count: size - frame.utf8.count) + #""}}"#
        }
        #expect(PayloadLint.nearLimitMargin(limit: 4_096) == 128)
        #expect(try Self.codes(payload(4_096)) == [.payloadNearLimit])
        #expect(try Self.codes(payload(3_969)) == [.payloadNearLimit])
        #expect(try Self.codes(payload(3_968)).isEmpty)
        let warning = try #require(try Self.warnings(payload(4_000)).first)
        #expect(warning.message.contains("4000 of the 4096 bytes"))
        // The legacy profile's 256 bytes: the margin is 16.
        let legacy = "dispatch: {profile: legacy}\n"
        #expect(try Self.codes(payload(250), yaml: legacy) == [.payloadNearLimit])
        #expect(try Self.codes(payload(240), yaml: legacy).isEmpty)
    }

    @Test("a category no content extension of the app claims, with a hint for one that differs only in case")
    func unclaimedCategory() throws {
        let warning = try #require(try Self.warnings(#"{"aps":{"alert":"Hi","category":"news"}}"#).first)
        #expect(warning.code == .categoryWithoutContentExtension)
        #expect(warning.message.contains("did you mean NEWS?"))
        #expect(warning.message.contains("NewsPreview (NEWS, LIVE); Gallery (IMAGE)"))
        #expect(warning.fix.contains("Add news to a content extension's categories"))
        #expect(try Self.codes(#"{"aps":{"alert":"Hi","category":"SPORT"}}"#) == [.categoryWithoutContentExtension])
        #expect(try Self.codes(#"{"aps":{"alert":"Hi","category":"NEWS"}}"#).isEmpty)
        // No content extensions, or no category: nothing to claim it.
        #expect(try Self.codes(#"{"aps":{"alert":"Hi","category":"NEWS"}}"#, headers: [("apns-topic", "com.example.plain")]).isEmpty)
        #expect(try Self.codes(#"{"aps":{"alert":"Hi"}}"#).isEmpty)
    }

    @Test("a warning reads as one line: code, message, fix")
    func line() {
        let warning = LintWarning(.payloadNearLimit, "Too close.", fix: "Trim it.")
        #expect(warning.line == "payload-near-limit: Too close. Fix: Trim it.")
    }

    @Test("time-sensitive or critical without the entitlement warns; with it, or for active, it does not")
    func interruptionLevelNotEntitled() throws {
        let yaml = """
            apps:
              com.example.app: {entitlements: [timeSensitive]}
              com.example.plain: {}
            """
        let plain = [("apns-topic", "com.example.plain")]
        let warned = try Self.warnings(#"{"aps":{"alert":"x","interruption-level":"time-sensitive"}}"#, headers: plain, yaml: yaml)
        #expect(warned.map(\.code) == [.interruptionLevelNotEntitled])
        #expect(warned.first?.message.contains("timeSensitive") == true)
        #expect(try Self.warnings(#"{"aps":{"alert":"x","interruption-level":"critical"}}"#, yaml: yaml).map(\.code) == [.interruptionLevelNotEntitled])
        #expect(try Self.warnings(#"{"aps":{"alert":"x","interruption-level":"time-sensitive"}}"#, yaml: yaml).isEmpty)
        #expect(try Self.warnings(#"{"aps":{"alert":"x","interruption-level":"active"}}"#, headers: plain, yaml: yaml).isEmpty)
    }

    @Test("a badge for an app whose willPresent options leave out badge warns; with badge among them, or without willPresent, it does not")
    func badgeIgnoredInForeground() throws {
        let yaml = """
            apps:
              com.example.app:
                willPresent: [banner, list]
                categories:
                  COUNT: {willPresent: [banner, badge]}
              com.example.plain: {}
            """
        #expect(try Self.warnings(#"{"aps":{"alert":"x","badge":2}}"#, yaml: yaml).map(\.code) == [.badgeIgnoredInForeground])
        #expect(try Self.warnings(#"{"aps":{"alert":"x","badge":2,"category":"COUNT"}}"#, yaml: yaml).isEmpty)
        #expect(try Self.warnings(#"{"aps":{"alert":"x","badge":2}}"#, headers: [("apns-topic", "com.example.plain")], yaml: yaml).isEmpty)
        #expect(try Self.warnings(#"{"aps":{"alert":"x"}}"#, yaml: yaml).isEmpty)
    }
}
