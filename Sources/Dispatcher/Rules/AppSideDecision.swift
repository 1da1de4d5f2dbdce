import Notifications

/// The app's side of a delivery (SEMANTICS sections 6 and 8): the callback, the launch, and
/// whether a silent push to a force-quit app is discarded.
struct AppSideDecision: Sendable, Hashable {
    /// The method called, nil when none.
    var callback: AppCallback?
    /// The launch, nil when none.
    var launch: LaunchTrigger?
    /// Whether the delivery is discarded (`app-force-quit`).
    var discardsForceQuit: Bool = false
    /// The row of the table that decided.
    var rule: AppSideRule

    /// Decides for a push of `pushType` with the request's original `payload` to an app in `state`,
    /// on a device whose user chose `settings` (section 20).
    static func decide(
        pushType: PushType,
        profile: Profile,
        state: AppState,
        delegate: AppDelegateMethods,
        traits payload: Payload.Traits,
        settings: NotificationSettings = .defaults,
        hidesViewButton: Bool
    ) -> AppSideDecision {
        var decision = decideRow(
            pushType: pushType, profile: profile, state: state, delegate: delegate, traits: payload, hidesViewButton: hidesViewButton)
        // Section 20: an alert the system does not show (not authorized, or alerts off) cannot be
        // opened, so it launches nothing; background deliveries and callbacks are unchanged.
        if decision.launch == .userOpensNotification, pushType == .alert, profile == .modern, !settings.showsAlerts {
            decision.launch = nil
        }
        return decision
    }

    /// The row of section 6's tables that decides, before the user's settings are read.
    private static func decideRow(
        pushType: PushType,
        profile: Profile,
        state: AppState,
        delegate: AppDelegateMethods,
        traits payload: Payload.Traits,
        hidesViewButton: Bool
    ) -> AppSideDecision {
        // An MDM push never reaches an app, in either profile (section 6).
        if pushType == .mdm { return AppSideDecision(callback: nil, launch: nil, rule: .otherPushType) }
        if profile == .modern {
            switch pushType {
            case .alert, .background:
                break
            case .voip:
                let relaunches = state == .notRunning || state == .forceQuit
                return AppSideDecision(callback: .pushKit, launch: relaunches ? .backgroundDelivery : nil, rule: .voip)
            default:
                return AppSideDecision(callback: nil, launch: nil, rule: .otherPushType)
            }
        }
        // Legacy: content-available has no effect (nothing is silent) and FCH does not exist.
        let contentAvailable = profile == .modern && payload.contentAvailable
        let silent = profile == .modern && payload.isSilent
        let fetchHandler: AppCallback? =
            profile == .modern && delegate.implementsFetchCompletionHandler ? .fetchCompletionHandler : nil
        // A legacy alert whose show-view is false has no View button: the user cannot open the app from it.
        let userCanOpen = payload.hasAlertText && !(profile == .legacy && hidesViewButton)
        switch state {
        case .foreground:
            return AppSideDecision(callback: foregroundCallback(profile: profile, delegate: delegate), launch: nil, rule: .foreground)
        case .background, .suspended:
            return AppSideDecision(
                callback: contentAvailable ? fetchHandler : nil, launch: nil,
                rule: contentAvailable ? .backgroundContentAvailable : .backgroundOtherwise)
        case .notRunning:
            if contentAvailable { return AppSideDecision(callback: fetchHandler, launch: .backgroundDelivery, rule: .notRunningContentAvailable) }
            if userCanOpen { return AppSideDecision(callback: nil, launch: .userOpensNotification, rule: .notRunningAlertText) }
            return AppSideDecision(callback: nil, launch: nil, rule: .notRunningOtherwise)
        case .forceQuit:
            if silent { return AppSideDecision(callback: nil, launch: nil, discardsForceQuit: true, rule: .forceQuitSilent) }
            if userCanOpen { return AppSideDecision(callback: nil, launch: .userOpensNotification, rule: .forceQuitAlertText) }
            return AppSideDecision(callback: nil, launch: nil, rule: .forceQuitOtherwise)
        }
    }

    /// The foreground row's callback: FCH if the delegate implements it (never in the legacy
    /// profile), else the deprecated method if implemented, else nil. Section 10 applies it to the
    /// default action of the legacy action handlers too.
    static func foregroundCallback(profile: Profile, delegate: AppDelegateMethods) -> AppCallback? {
        if profile == .modern, delegate.implementsFetchCompletionHandler { return .fetchCompletionHandler }
        return delegate.implementsLegacy ? .legacy : nil
    }
}
