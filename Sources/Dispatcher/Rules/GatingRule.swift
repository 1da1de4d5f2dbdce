package import Notifications

/// The gating rules of SEMANTICS section 3, in order: the first that applies keeps a service
/// extension from running and gives the delivery its reason. `allCases` is that order.
///
/// Rules 1 to 4 read the request and the user's notification settings (``applies(to:profile:settings:)``);
/// rule 5 (`no-extension`) is decided by routing (``ExtensionRoute``), which runs only once the
/// others let the request through.
package enum GatingRule: String, Sendable, Hashable, CaseIterable {
    /// 1. The `legacy` profile has no service extensions.
    case legacyProfile = "legacy-profile"
    /// 2. Only `alert` pushes can be modified.
    case pushTypeNotModifiable = "push-type-not-modifiable"
    /// 3. No alert text: silent, sound-only and badge-only pushes cannot be modified.
    case noAlert = "no-alert"
    /// 3a. The user has not authorized notifications (`denied` or `notDetermined`, section 20).
    case notAuthorized = "not-authorized"
    /// 3b. The user switched the app's alerts off (section 20).
    case alertsOff = "alerts-off"
    /// 4. `mutable-content` is not 1.
    case notMutable = "not-mutable"
    /// 5. No service extension is configured for the app and category.
    case noExtension = "no-extension"

    /// The rule's number in the contract's table: `1` to `5`, with `3a` and `3b` between 3 and 4.
    package var number: String {
        switch self {
        case .legacyProfile: "1"
        case .pushTypeNotModifiable: "2"
        case .noAlert: "3"
        case .notAuthorized: "3a"
        case .alertsOff: "3b"
        case .notMutable: "4"
        case .noExtension: "5"
        }
    }

    /// The delivery reason when the rule applies.
    package var reason: DeliveryReason {
        switch self {
        case .legacyProfile: .legacyProfile
        case .pushTypeNotModifiable: .pushTypeNotModifiable
        case .noAlert: .noAlert
        case .notAuthorized: .notAuthorized
        case .alertsOff: .alertsOff
        case .notMutable: .notMutable
        case .noExtension: .noExtension
        }
    }

    /// The rule's condition, for a person.
    package var condition: String {
        switch self {
        case .legacyProfile: "the profile is legacy"
        case .pushTypeNotModifiable: "the push type is not alert"
        case .noAlert: "the payload has no alert text: silent, sound-only or badge-only"
        case .notAuthorized: "the user has not authorized notifications: authorization denied or notDetermined"
        case .alertsOff: "the user switched the app's alerts off"
        case .notMutable: "aps.mutable-content is not 1"
        case .noExtension: "no service extension is configured for the app and category"
        }
    }

    /// Whether the rule applies to `request` on a device with `settings`; always false for
    /// ``noExtension``, which routing decides.
    package func applies(to request: NotificationRequest, profile: Profile, settings: NotificationSettings = .defaults) -> Bool {
        applies(pushType: request.pushType, traits: request.payload.traits, profile: profile, settings: settings)
    }

    /// Whether the rule applies to a request of `pushType` whose original payload has `traits`, to
    /// a device whose user chose `settings`.
    ///
    /// Rules 3a and 3b come after rules 1 to 3, so they are only reached for `alert` pushes with
    /// alert text in the `modern` profile: the only requests section 20 changes.
    func applies(pushType: PushType, traits: Payload.Traits, profile: Profile, settings: NotificationSettings) -> Bool {
        switch self {
        case .legacyProfile: profile == .legacy
        case .pushTypeNotModifiable: pushType != .alert
        case .noAlert: !traits.hasAlertText
        case .notAuthorized: settings.isUnauthorized
        case .alertsOff: !settings.alerts
        case .notMutable: !traits.mutableContent
        case .noExtension: false
        }
    }

    /// The first of rules 1 to 4 that applies to `request` on a device with `settings`, nil when
    /// the request may be modified should routing find an extension.
    package static func firstApplying(
        to request: NotificationRequest, profile: Profile, settings: NotificationSettings = .defaults
    ) -> GatingRule? {
        firstApplying(pushType: request.pushType, traits: request.payload.traits, profile: profile, settings: settings)
    }

    /// The first rule, in order, that applies to a request of `pushType` whose payload has `traits`,
    /// on a device with `settings`.
    static func firstApplying(pushType: PushType, traits: Payload.Traits, profile: Profile, settings: NotificationSettings) -> GatingRule? {
        allCases.first { $0.applies(pushType: pushType, traits: traits, profile: profile, settings: settings) }
    }
}
