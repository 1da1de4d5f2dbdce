/// The user's notification settings for one app on one device (SEMANTICS section 20): whether the
/// user authorized notifications, and the switches for alerts, sounds and badges. They live in the
/// token's devices-table entry (a token belongs to one app on one device); a token without an
/// entry has ``defaults``.
///
/// They apply in the `modern` profile to push type `alert` only: background pushes need no
/// authorization, and the other push types have switches of their own, not modelled.
package struct NotificationSettings: Sendable, Hashable {
    /// `authorization`: what the user answered when the app asked (`UNAuthorizationStatus`).
    package enum Authorization: String, Sendable, Hashable, CaseIterable {
        /// The user allowed notifications (the default).
        case authorized
        /// Provisional authorization: notifications are delivered quietly, to the list only.
        case provisional
        /// The user refused notifications.
        case denied
        /// The app never asked: nothing is shown.
        case notDetermined
    }

    /// `authorization`.
    package var authorization: Authorization = .authorized
    /// `alerts`: whether the user lets the app show alerts (banners and the notification list).
    package var alerts = true
    /// `sounds`: whether the user lets the app play sounds.
    package var sounds = true
    /// `badges`: whether the user lets the app badge its icon.
    package var badges = true

    /// Every setting at its default: authorized, alerts, sounds and badges on.
    package static let defaults = NotificationSettings()

    /// Settings with every default.
    package init() {}

    /// Settings with these values.
    package init(authorization: Authorization, alerts: Bool = true, sounds: Bool = true, badges: Bool = true) {
        self.authorization = authorization
        self.alerts = alerts
        self.sounds = sounds
        self.badges = badges
    }

    /// Whether nothing of an alert is presented: `denied` or `notDetermined` (gating rule 3a,
    /// `userAlert` null, the badge unchanged, no launch by opening the notification).
    package var isUnauthorized: Bool { authorization == .denied || authorization == .notDetermined }

    /// Whether the system shows the app's alerts at all: authorized (or provisional) with alerts on.
    /// When it does not, there is nothing a user could open, and nothing a service extension could change.
    package var showsAlerts: Bool { !isUnauthorized && alerts }

    /// Whether a sound may play: not under `provisional` (delivered quietly), not with sounds off.
    package var allowsSound: Bool { authorization == .authorized && sounds }

    /// Whether the badge may change: not under `provisional` (delivered quietly), not with badges off.
    package var allowsBadge: Bool { authorization == .authorized && badges }

    /// Whether a banner may show: not under `provisional`, which delivers to the list only.
    package var allowsBanner: Bool { authorization == .authorized && alerts }
}
