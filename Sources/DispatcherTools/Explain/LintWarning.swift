import Dispatcher

/// A payload that is valid but likely not what its sender meant: what is wrong, why, and the fix.
package struct LintWarning: Sendable, Hashable {
    /// Which kind of mistake; stable, for scripts and tests.
    package enum Code: String, Sendable, Hashable, CaseIterable {
        /// `mutable-content: 1` without alert text: no service extension runs.
        case mutableContentWithoutAlert = "mutable-content-without-alert"
        /// A silent payload sent as an `alert` push at priority 10.
        case silentPushAtPriority10 = "silent-push-at-priority-10"
        /// A media URL over plain HTTP.
        case mediaURLNotHTTPS = "media-url-not-https"
        /// A media URL whose path has no file extension.
        case mediaURLWithoutFileExtension = "media-url-without-file-extension"
        /// A payload a few bytes under its size limit.
        case payloadNearLimit = "payload-near-limit"
        /// A category none of the app's content extensions claims.
        case categoryWithoutContentExtension = "category-without-content-extension"
        /// `time-sensitive` or `critical` for an app without the entitlement: shown as `active`.
        case interruptionLevelNotEntitled = "interruption-level-not-entitled"
        /// A `willPresent` list without `badge`: a badge sent to the app in the foreground does nothing.
        case badgeIgnoredInForeground = "badge-ignored-in-foreground"
        /// A Live Activity `timestamp` (or `stale-date`, `dismissal-date`) in milliseconds, not seconds.
        case liveActivityDateInMilliseconds = "live-activity-date-in-milliseconds"
        /// A Live Activity push whose `stale-date` has passed: the activity is stale at once.
        case staleDateInPast = "stale-date-in-past"
        /// A `start` the device cannot use (no `attributes-type`, `attributes`, `content-state` or
        /// alert text): delivered as `malformed`.
        case liveActivityStartIncomplete = "live-activity-start-incomplete"
        /// A `start` subscribing to a channel for an app without the `broadcast` entitlement.
        case channelWithoutBroadcast = "channel-without-broadcast"
        /// `dismissal-date` on a `start` or `update`: only an `end` reads it.
        case dismissalDateIgnored = "dismissal-date-ignored"
        /// An alert to a device whose user has not authorized notifications: nothing is shown (section 20).
        case userNotAuthorized = "user-not-authorized"
        /// Alert text to a device whose user switched the app's alerts off (section 20).
        case alertsSwitchedOff = "alerts-switched-off"
        /// A sound, a badge or an urgent level to a device with provisional authorization: delivered quietly (section 20).
        case deliveredQuietly = "delivered-quietly"
        /// `aps.badge` to an app that keeps a badge ledger: the number replaces the device's count (section 21).
        case badgeSetDespiteLedger = "badge-set-despite-ledger"
    }

    /// Which kind of mistake.
    package let code: Code
    /// What is wrong and why it matters, for a person.
    package let message: String
    /// What to change.
    package let fix: String
    /// The sentences the warning rests on.
    package let citations: [Citation]

    /// Creates a warning.
    package init(_ code: Code, _ message: String, fix: String, citations: [Citation] = []) {
        self.code = code
        self.message = message
        self.fix = fix
        self.citations = citations
    }

    /// The warning on one line: `code: message Fix: fix`.
    package var line: String { "\(code.rawValue): \(message) Fix: \(fix)" }
}
