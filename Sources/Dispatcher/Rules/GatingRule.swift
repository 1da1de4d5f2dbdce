package import Notifications

/// The gating rules of SEMANTICS section 3, in order: the first that applies keeps a service
/// extension from running and gives the delivery its reason. `allCases` is that order.
///
/// Rules 1 to 4 read the request alone (``applies(to:profile:)``); rule 5 (`no-extension`) is
/// decided by routing (``ExtensionRoute``), which runs only once the first four let the request through.
package enum GatingRule: String, Sendable, Hashable, CaseIterable {
    /// 1. The `legacy` profile has no service extensions.
    case legacyProfile = "legacy-profile"
    /// 2. Only `alert` pushes can be modified.
    case pushTypeNotModifiable = "push-type-not-modifiable"
    /// 3. No alert text: silent, sound-only and badge-only pushes cannot be modified.
    case noAlert = "no-alert"
    /// 4. `mutable-content` is not 1.
    case notMutable = "not-mutable"
    /// 5. No service extension is configured for the app and category.
    case noExtension = "no-extension"

    /// The delivery reason when the rule applies.
    package var reason: DeliveryReason {
        switch self {
        case .legacyProfile: .legacyProfile
        case .pushTypeNotModifiable: .pushTypeNotModifiable
        case .noAlert: .noAlert
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
        case .notMutable: "aps.mutable-content is not 1"
        case .noExtension: "no service extension is configured for the app and category"
        }
    }

    /// Whether the rule applies to `request`; always false for ``noExtension``, which routing decides.
    package func applies(to request: NotificationRequest, profile: Profile) -> Bool {
        applies(pushType: request.pushType, traits: request.payload.traits, profile: profile)
    }

    /// Whether the rule applies to a request of `pushType` whose payload has `traits`.
    func applies(pushType: PushType, traits: Payload.Traits, profile: Profile) -> Bool {
        switch self {
        case .legacyProfile: profile == .legacy
        case .pushTypeNotModifiable: pushType != .alert
        case .noAlert: !traits.hasAlertText
        case .notMutable: !traits.mutableContent
        case .noExtension: false
        }
    }

    /// The first of rules 1 to 4 that applies to `request`, nil when the request may be modified
    /// should routing find an extension.
    package static func firstApplying(to request: NotificationRequest, profile: Profile) -> GatingRule? {
        firstApplying(pushType: request.pushType, traits: request.payload.traits, profile: profile)
    }

    /// The first rule, in order, that applies to a request of `pushType` whose payload has `traits`.
    static func firstApplying(pushType: PushType, traits: Payload.Traits, profile: Profile) -> GatingRule? {
        allCases.first { $0.applies(pushType: pushType, traits: traits, profile: profile) }
    }
}
