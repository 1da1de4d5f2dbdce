package import Dispatcher
import Foundation
import JSON
package import Notifications

/// Warns about requests that are valid but will likely not do what their sender meant: each
/// warning says what is wrong, why, and the fix. Lint never changes a decision: `explain` and
/// `dispatch --lint` show its warnings beside the rules' outcome.
package struct PayloadLint: Sendable {
    /// The configuration whose apps the requests are for.
    package let configuration: Configuration
    /// The payload path a step downloads media from (the `attachment` kind's `urlPath`), nil for
    /// steps that download nothing.
    private let mediaURLPath: @Sendable (ExtensionStep) -> String?

    /// Creates a lint for `configuration`.
    /// - Parameter mediaURLPath: where a step finds its media URL in the payload (dotted path), nil
    ///   when it downloads none; `BuiltInExtensions.mediaURLPath(of:)` knows the built-in kinds.
    package init(configuration: Configuration, mediaURLPath: @escaping @Sendable (ExtensionStep) -> String? = { _ in nil }) {
        self.configuration = configuration
        self.mediaURLPath = mediaURLPath
    }

    /// The warnings for a valid request, in a fixed order.
    /// - Parameters:
    ///   - payloadBytes: the size of the record's value, as validation measured it.
    ///   - settings: the user's notification settings on the request's device (its devices entry,
    ///     section 20), nil when the token has none (the defaults).
    package func warnings(for request: NotificationRequest, payloadBytes: Int, settings: NotificationSettings? = nil) -> [LintWarning] {
        var warnings: [LintWarning] = []
        let payload = request.payload
        if payload.mutableContent, !payload.hasAlertText {
            warnings.append(
                LintWarning(
                    .mutableContentWithoutAlert,
                    "aps.mutable-content is 1 but the payload has no alert text, so no service extension runs for it (gating rule no-alert).",
                    fix: "Add alert text (aps.alert as a string, or an object with a title or body), or remove mutable-content.",
                    citations: [.cannotModifySilent]))
        }
        if payload.isSilent, request.pushType == .alert, request.priority == .immediate {
            let how = request.pushTypeWasGiven ? "given in apns-push-type" : "inferred from the aps.alert key"
            warnings.append(
                LintWarning(
                    .silentPushAtPriority10,
                    "The payload is a silent background update (content-available 1, no alert text, badge or sound) sent as push type alert (\(how)) at priority 10: as push type background that priority is refused (BadPriority), and as an alert it shows nothing.",
                    fix: "Send it with apns-push-type: background and apns-priority: 5, without an empty aps.alert; or add alert text if the user should see it.",
                    citations: [.priority, .pushTypeInference]))
        }
        warnings += mediaURLWarnings(request)
        let limit = request.pushType.payloadLimit(profile: configuration.dispatch.profile)
        let margin = Self.nearLimitMargin(limit: limit)
        if payloadBytes <= limit, payloadBytes > limit - margin {
            warnings.append(
                LintWarning(
                    .payloadNearLimit,
                    "The payload takes \(payloadBytes) of the \(limit) bytes allowed for push type \(request.pushType.rawValue): a little more (a longer name, a translation, one more key) and it is refused as PayloadTooLarge.",
                    fix: "Keep the payload well under the limit: send an identifier and let the app or its service extension fetch the rest.",
                    citations: [.payloadTooLarge, .strictSizeLimit]))
        }
        if let warning = unclaimedCategory(request) { warnings.append(warning) }
        warnings += userAlertWarnings(request)
        warnings += settingsWarnings(request, settings: settings ?? .defaults)
        warnings += liveActivityWarnings(request)
        if let warning = ledgerOverwritten(request) { warnings.append(warning) }
        return warnings
    }

    /// Section 21: a payload that sets `aps.badge` to an app whose badge the dispatcher counts.
    private func ledgerOverwritten(_ request: NotificationRequest) -> LintWarning? {
        let payload = request.payload
        guard request.pushType == .alert, payload.hasBadge, configuration.apps[request.bundleID]?.badgeLedger == true,
            let badge = payload.json["aps"]?[path: ["badge"]]
        else { return nil }
        return LintWarning(
            .badgeSetDespiteLedger,
            "The app \(request.bundleID) keeps a badge ledger, and this payload sets aps.badge \(badge.compactText) itself: when it is shown, the device's count becomes \(badge.compactText) whatever it was, and later increments count on from there.",
            fix: "Send the header badge-increment (for example 1) without aps.badge to count on from the device's count; keep aps.badge only to set a number on purpose.",
            citations: [.badgeLedgerChange])
    }

    /// Section 20: an alert the user's settings keep from being shown, or heard.
    private func settingsWarnings(_ request: NotificationRequest, settings: NotificationSettings) -> [LintWarning] {
        guard configuration.dispatch.profile == .modern, request.pushType == .alert else { return [] }
        let payload = request.payload
        guard payload.hasAlertText || payload.hasSound || payload.hasBadge else { return [] }
        if settings.isUnauthorized {
            return [
                LintWarning(
                    .userNotAuthorized,
                    "The device's user has not authorized the app's notifications (authorization \(settings.authorization.rawValue)): nothing of this alert is shown, heard or badged, no service extension runs for it (gating rule 3a) and opening it cannot launch the app.",
                    fix: "Send what the app needs to know as a background push (apns-push-type background, content-available 1), which needs no authorization; have the app ask for authorization (or provisional authorization) before sending it alerts.",
                    citations: [.notAuthorizedGate, .unauthorizedPresentsNothing, .backgroundNeedsNoAuthorization])
            ]
        }
        var warnings: [LintWarning] = []
        if !settings.alerts, payload.hasAlertText {
            warnings.append(
                LintWarning(
                    .alertsSwitchedOff,
                    "The device's user switched the app's alerts off: the alert text is shown neither as a banner nor in the list, no service extension runs for it (gating rule 3b) and opening it cannot launch the app; only its sound and badge apply, as the user's switches allow.",
                    fix: "Send what the app needs to know as a background push, or leave the alert text out for this device.",
                    citations: [.alertsOffGate, .alertsOffShowsNothing]))
        }
        let urgent = payload.interruptionLevel == .timeSensitive || payload.interruptionLevel == .critical
        if settings.authorization == .provisional, settings.alerts, payload.hasSound || payload.hasBadge || urgent {
            let lost = [payload.hasSound ? "its sound does not play" : nil, payload.hasBadge ? "its badge does not change" : nil, urgent ? "no banner shows whatever its interruption level" : nil]
                .compactMap { $0 }
            warnings.append(
                LintWarning(
                    .deliveredQuietly,
                    "The device's user gave the app provisional authorization: the notification is delivered quietly, to the notification list only, so \(lost.joined(separator: ", ")).",
                    fix: "Expect it in the list only; the app can ask for full authorization once the user keeps its notifications.",
                    citations: [.provisionalQuiet]))
        }
        return warnings
    }

    /// The mistakes providers make with ActivityKit pushes (SEMANTICS section 14).
    private func liveActivityWarnings(_ request: NotificationRequest) -> [LintWarning] {
        guard request.pushType == .liveactivity, configuration.dispatch.profile == .modern,
            let aps = request.payload.json["aps"]?.objectValue
        else { return [] }
        var warnings: [LintWarning] = []
        func seconds(_ key: String) -> Int64? {
            guard let number = aps[key]?.numberValue, number.isInteger else { return nil }
            return Int64(number.text)
        }
        let event = aps["event"]?.stringValue
        // UNIX seconds stay below 10^11 until the year 5138; milliseconds are above it since 1973.
        let inMilliseconds = ["timestamp", "stale-date", "dismissal-date"].filter { (seconds($0) ?? 0) > 100_000_000_000 }
        if !inMilliseconds.isEmpty {
            warnings.append(
                LintWarning(
                    .liveActivityDateInMilliseconds,
                    "aps.\(inMilliseconds.joined(separator: ", aps.")) looks like milliseconds: ActivityKit reads UNIX seconds, so the date is thousands of years away (a timestamp that large makes every later push stale-ignored).",
                    fix: "Send whole seconds since 1970 (divide by 1000).",
                    citations: [.staleTimestamp]))
        }
        let now = Int64(request.receivedAt.timeIntervalSince1970.rounded(.down))
        if let stale = seconds("stale-date"), stale <= now, event != "end" {
            warnings.append(
                LintWarning(
                    .staleDateInPast,
                    "aps.stale-date \(stale) has passed at the time of processing: the activity is shown as stale at once.",
                    fix: "Send a stale-date in the future, or leave it out.",
                    citations: [.dismissal]))
        }
        if event == "start" {
            let missing = ["attributes-type", "attributes", "content-state"].filter { aps[$0] == nil }
                + (request.payload.hasAlertText ? [] : ["alert text"])
            if !missing.isEmpty {
                warnings.append(
                    LintWarning(
                        .liveActivityStartIncomplete,
                        "A start needs attributes-type, attributes, content-state and an alert; this one lacks \(missing.joined(separator: ", ")), so the device cannot start the activity (result malformed).",
                        fix: "Add the missing keys: the activity's attributes type and values, its first content state, and an alert.",
                        citations: [.row(of: .malformed)]))
            }
            if aps["input-push-channel"] != nil, configuration.apps[request.bundleID]?.entitlements.contains(.broadcast) != true {
                warnings.append(
                    LintWarning(
                        .channelWithoutBroadcast,
                        "The start subscribes the activity to a broadcast channel, but the app does not have the broadcast entitlement: every broadcast to it is FeatureNotEnabled.",
                        fix: "Add broadcast to apps.\(request.bundleID).entitlements (enable the capability for the bundle ID), or leave out input-push-channel.",
                        citations: [.rule(of: .entitlement)]))
            }
        }
        if aps["dismissal-date"] != nil, event == "start" || event == "update" {
            warnings.append(
                LintWarning(
                    .dismissalDateIgnored,
                    "aps.dismissal-date is read only by an end event; on a\(event == "update" ? "n update" : " start") it does nothing.",
                    fix: "Send the dismissal-date with the end event.",
                    citations: [.dismissal]))
        }
        return warnings
    }

    /// Section 17: an interruption level the app is not entitled to, and a badge that the
    /// foreground's `willPresent` options leave out.
    private func userAlertWarnings(_ request: NotificationRequest) -> [LintWarning] {
        guard configuration.dispatch.profile == .modern, request.pushType == .alert else { return [] }
        let payload = request.payload
        let app = configuration.apps[request.bundleID]
        var warnings: [LintWarning] = []
        let needed: (Entitlement, String)? =
            switch payload.interruptionLevel {
            case .timeSensitive?: (.timeSensitive, "time-sensitive")
            case .critical?: (.criticalAlerts, "critical")
            default: nil
            }
        if let (entitlement, level) = needed, app?.entitlements.contains(entitlement) != true {
            warnings.append(
                LintWarning(
                    .interruptionLevelNotEntitled,
                    "aps.interruption-level is \(level), but the app \(request.bundleID) does not have the \(entitlement.rawValue) entitlement: the notification is shown as active, and a Focus silences it.",
                    fix: "Add \(entitlement.rawValue) to apps.\(request.bundleID).entitlements if the app has the capability, or send active.",
                    citations: [.interruptionLevel]))
        }
        if payload.hasBadge, let options = app.flatMap({ UserAlertRule.willPresent(settings: $0, category: payload.category) }), !options.contains(.badge) {
            warnings.append(
                LintWarning(
                    .badgeIgnoredInForeground,
                    "The payload sets a badge, but the app's willPresent options (\(options.map(\.rawValue).joined(separator: ", "))) leave out badge: while the app is in the foreground the badge does not change.",
                    fix: "Add badge to the willPresent options if the foreground should update the badge, or set the badge from the app.",
                    citations: [.foregroundBadge]))
        }
        return warnings
    }

    /// How close to `limit` a payload may come before lint warns: 1/32 of it, at least 16 bytes
    /// (128 bytes of the usual 4096).
    package static func nearLimitMargin(limit: Int) -> Int { max(16, limit / 32) }

    /// The media URLs of the app's download steps: plain HTTP, or a path without a file extension.
    private func mediaURLWarnings(_ request: NotificationRequest) -> [LintWarning] {
        guard let app = configuration.apps[request.bundleID] else { return [] }
        var paths: [String] = []
        for setting in [app.serviceExtension] + app.categories.keys.sorted().map({ app.categories[$0]?.serviceExtension }) {
            guard case .chain(let steps)? = setting else { continue }
            for step in steps { if let path = mediaURLPath(step), !paths.contains(path) { paths.append(path) } }
        }
        var warnings: [LintWarning] = []
        for path in paths {
            guard let text = JSONValue.object(request.payload.json)[path: path.split(separator: ".").map(String.init)]?.stringValue,
                let url = URL(string: text), let scheme = url.scheme?.lowercased(), url.host != nil
            else { continue }
            if scheme == "http" {
                warnings.append(
                    LintWarning(
                        .mediaURLNotHTTPS,
                        "The media URL at \(path) (\(text)) uses plain HTTP: an app's own service extension may not load it (App Transport Security), and anyone on the way can read or replace the file.",
                        fix: "Serve the file over https.",
                        citations: [.modifyContent]))
            }
            if url.pathExtension.isEmpty {
                warnings.append(
                    LintWarning(
                        .mediaURLWithoutFileExtension,
                        "The media URL at \(path) (\(text)) has no file extension: iOS tells an attachment's type by its file extension, so a service extension that saves the download as is cannot attach it.",
                        fix: "End the URL's path with the file's extension (.jpg, .png, .gif, .mp4, .m4a, ...).",
                        citations: [.modifyContent]))
            }
        }
        return warnings
    }

    /// A category none of the app's content extensions claims, when the app has content extensions.
    private func unclaimedCategory(_ request: NotificationRequest) -> LintWarning? {
        guard request.pushType == .alert, configuration.dispatch.profile == .modern, let category = request.payload.category,
            let app = configuration.apps[request.bundleID], !app.contentExtensions.isEmpty,
            !app.contentExtensions.contains(where: { $0.categories.contains(category) })
        else { return nil }
        let claimed = app.contentExtensions.flatMap(\.categories)
        let extensions = app.contentExtensions.map { "\($0.name) (\($0.categories.joined(separator: ", ")))" }
        let sameLetters = claimed.first { $0.lowercased() == category.lowercased() }
        let hint = sameLetters.map { "; did you mean \($0)? Categories match exactly, case included" } ?? ""
        return LintWarning(
            .categoryWithoutContentExtension,
            "The category \(category) is claimed by none of the app's content extensions (\(extensions.joined(separator: "; "))), so the notification gets the system's default interface\(hint).",
            fix: "Add \(category) to a content extension's categories, or send one of \(claimed.joined(separator: ", ")).",
            citations: [.contentExtensionCategories, .presentation])
    }
}
