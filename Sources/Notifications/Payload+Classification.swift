import JSON

extension Payload {
    /// Whether there is alert text: a non-empty alert string, or an alert object with a non-empty
    /// `title`, `subtitle`, `body`, `title-loc-key`, `subtitle-loc-key` or `loc-key`.
    public var hasAlertText: Bool { storage.traits.hasAlertText }

    /// Whether the push is silent: `content-available` is 1 and there is no alert text, no `badge`, no `sound`.
    public var isSilent: Bool { storage.traits.isSilent }

    /// Whether the push only plays a sound: a `sound`, no alert text, no `badge`.
    public var isSoundOnly: Bool {
        let traits = storage.traits
        return traits.hasSound && !traits.hasAlertText && !traits.hasBadge
    }

    /// Whether the push only sets the badge: a `badge`, no alert text, no `sound`.
    public var isBadgeOnly: Bool {
        let traits = storage.traits
        return traits.hasBadge && !traits.hasAlertText && !traits.hasSound
    }

    /// Whether `content-available` is 1.
    public var contentAvailable: Bool { storage.traits.contentAvailable }

    /// Whether `mutable-content` is 1.
    public var mutableContent: Bool { storage.traits.mutableContent }

    /// `aps.category`.
    public var category: String? { storage.traits.category }

    /// Whether the alert object's legacy `show-view` is `false`: the alert has no View button, so
    /// the user cannot open the app from it (seed 001).
    public var hidesViewButton: Bool { storage.traits.hidesViewButton }

    /// What the delivery does to the badge: `badge` present sets it (0 clears); absent leaves it, except
    /// in the `legacy` profile where absence clears it.
    public func badgeEffect(profile: Profile) -> BadgeEffect { storage.traits.badgeEffect(profile: profile) }

    /// What the rules read of `aps`, without the payload: the request decided in place has only these.
    package var traits: Traits { storage.traits }
}

extension Payload {
    /// Whether `badge` is present.
    public var hasBadge: Bool { storage.traits.hasBadge }

    /// Whether `sound` is present.
    public var hasSound: Bool { storage.traits.hasSound }

    /// `aps.interruption-level`, nil when absent.
    public var interruptionLevel: InterruptionLevel? { storage.traits.interruptionLevel }

    /// Whether `aps.content-changed` is true (widgets and controls, section 18).
    public var contentChanged: Bool { storage.traits.contentChanged }
}

extension Payload.Traits {
    /// Silent: `content-available` 1 and no alert text, badge or sound (section 3).
    package var isSilent: Bool {
        contentAvailable && !hasAlertText && !hasBadge && !hasSound
    }

    /// The badge change a device applies (sections 6 and 8): set, cleared, or unchanged.
    package func badgeEffect(profile: Profile) -> BadgeEffect {
        guard hasBadge else { return profile == .legacy ? .clear : .unchanged }
        return badgeIsZero ? .clear : .set
    }
}

extension Payload.Traits {
    /// The value of JSON integer text (an optional `-`, then digits), held to `Int`'s range.
    static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int {
        var digits = text[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        var magnitude = 0
        for byte in digits {
            let digit = Int(byte &- UInt8(ascii: "0"))
            guard digit < 10 else { break }
            let (shifted, overflowA) = magnitude.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = shifted.addingReportingOverflow(digit)
            if overflowA || overflowB { return negative ? Int.min : Int.max }
            magnitude = next
        }
        return negative ? -magnitude : magnitude
    }
}
