extension Payload {
    /// Whether there is alert text: a non-empty alert string, or an alert object with a non-empty
    /// `title`, `subtitle`, `body`, `title-loc-key`, `subtitle-loc-key` or `loc-key`.
    public var hasAlertText: Bool { storage.aps.alert?.hasText ?? false }

    /// Whether the push is silent: `content-available` is 1 and there is no alert text, no `badge`, no `sound`.
    public var isSilent: Bool { contentAvailable && !hasAlertText && storage.aps.badge == nil && storage.aps.sound == nil }

    /// Whether the push only plays a sound: a `sound`, no alert text, no `badge`.
    public var isSoundOnly: Bool { storage.aps.sound != nil && !hasAlertText && storage.aps.badge == nil }

    /// Whether the push only sets the badge: a `badge`, no alert text, no `sound`.
    public var isBadgeOnly: Bool { storage.aps.badge != nil && !hasAlertText && storage.aps.sound == nil }

    /// Whether `content-available` is 1.
    public var contentAvailable: Bool { storage.aps.contentAvailable.map(Self.isOne) ?? false }

    /// Whether `mutable-content` is 1.
    public var mutableContent: Bool { storage.aps.mutableContent.map(Self.isOne) ?? false }

    /// `aps.category`.
    public var category: String? { storage.aps.category }

    /// What the delivery does to the badge: `badge` present sets it (0 clears); absent leaves it, except
    /// in the `legacy` profile where absence clears it.
    public func badgeEffect(profile: Profile) -> BadgeEffect {
        guard let badge = storage.aps.badge else { return profile == .legacy ? .clear : .unchanged }
        return badge.isZero ? .clear : .set
    }

    /// Whether an integer's value is 1 (`1`; the integer rule excludes `1.0`).
    private static func isOne(_ number: JSONNumber) -> Bool { number.text == "1" }
}
