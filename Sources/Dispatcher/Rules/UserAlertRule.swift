import Notifications

/// Sections 17 and 18 of SEMANTICS: what the user sees of a delivery (`userAlert`), the foreground
/// badge rule, and whether widgets or controls reload (`widgetReload`); and section 20's part of
/// them: what the user's notification settings let through.
package enum UserAlertRule {
    /// `userAlert` for a delivery that is not discarded: non-nil only in the `modern` profile, for
    /// push type `alert`, when the delivered `payload` has alert text, a `badge` or a `sound` (17.1),
    /// and the user authorized notifications (`authorized` or `provisional`, section 20).
    ///
    /// The user's settings then take away what they do not allow: `provisional` delivers quietly
    /// (no banner, no sound), alerts off shows neither banner nor list, sounds off plays no sound.
    /// Each applies on its own, so a provisional device with alerts off shows nothing at all.
    ///
    /// `app` is the app's compiled routes rather than its settings: read through the reference,
    /// the few settings needed are not copied out with the rest of them for every record.
    static func decide(
        traits payload: Payload.Traits, pushType: PushType, profile: Profile, appState: AppState, app: AppRoutes?, device: DeviceEntry?
    ) -> UserAlert? {
        guard profile == .modern, pushType == .alert else { return nil }
        let hasText = payload.hasAlertText
        guard hasText || payload.hasBadge || payload.hasSound else { return nil }
        let settings = device?.settings ?? .defaults
        // Nothing is presented to a user who did not authorize notifications (17.1 read against section 20).
        guard !settings.isUnauthorized else { return nil }
        var level = payload.interruptionLevel ?? .active
        // The entitlements are read only for the levels that need one (a copy of the set is a retain).
        if level == .timeSensitive, app?.settings.entitlements.contains(.timeSensitive) != true { level = .active }
        if level == .critical, app?.settings.entitlements.contains(.criticalAlerts) != true { level = .active }
        let focus = focusEffect(level: level, device: device)
        let foreground = appState == .foreground
        var options: [PresentationOption]?
        var called = false
        if foreground {
            let configured = app.flatMap { willPresent(settings: $0.settings, category: payload.category) }
            called = configured != nil
            options = configured ?? []
        }
        let quiet = level == .passive || focus == .silenced
        func allows(_ option: PresentationOption) -> Bool { !foreground || options?.contains(option) == true }
        return UserAlert(
            interruptionLevel: level, focus: focus, willPresentCalled: called, options: options,
            banner: hasText && !quiet && allows(.banner) && settings.allowsBanner,
            list: hasText && allows(.list) && settings.showsAlerts,
            sound: payload.hasSound && !quiet && allows(.sound) && settings.allowsSound)
    }

    /// The `willPresent` options configured for `category` (the category's, else the app's); nil
    /// when the delegate does not implement the method.
    ///
    /// Not optional: `app?.settings` passed as an optional was a copy of the whole settings (a
    /// retain for each of their dictionaries, arrays and sets) for every record of an app in the
    /// foreground; `routes.settings` is passed borrowed.
    package static func willPresent(settings: AppSettings, category: String?) -> [PresentationOption]? {
        if let category, let options = settings.categories[category]?.willPresent { return options }
        return settings.willPresent
    }

    /// How the device's Focus treats a notification of `level` (17.2).
    static func focusEffect(level: InterruptionLevel, device: DeviceEntry?) -> UserAlert.FocusEffect {
        switch device?.focus ?? .none {
        case .none: .off
        case .allowing: .allowed
        case .silencing:
            level == .critical || (level == .timeSensitive && device?.timeSensitive != false) ? .breakthrough : .silenced
        }
    }

    /// The badge effect once `userAlert` is known: in the foreground a `badge` takes effect only
    /// when `badge` is among the options (17.2); an `alert` push in the `modern` profile changes the
    /// badge only when the user's `settings` allow it (authorized, badges on: section 20);
    /// otherwise `effect` as section 6 decided it.
    static func badgeEffect(
        _ effect: BadgeEffect, userAlert: UserAlert?, traits payload: Payload.Traits, pushType: PushType, profile: Profile,
        settings: NotificationSettings
    ) -> BadgeEffect {
        if pushType == .alert, profile == .modern, !settings.allowsBadge { return .unchanged }
        guard let options = userAlert?.options, payload.hasBadge, !options.contains(.badge) else { return effect }
        return .unchanged
    }

    /// `widgetReload` (section 18): `content-changed` for push types `widgets` and `controls` in
    /// the `modern` profile, nil otherwise.
    static func widgetReload(traits payload: Payload.Traits, pushType: PushType, profile: Profile) -> Bool? {
        guard profile == .modern, pushType == .widgets || pushType == .controls else { return nil }
        return payload.contentChanged
    }
}
