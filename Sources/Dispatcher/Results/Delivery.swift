public import Foundation
public import Notifications

/// Everything decided for one valid request: the content delivered and the app's side of it.
public struct Delivery: Sendable {
    /// The validated request.
    public var request: NotificationRequest
    /// Modified, original or discarded.
    public var disposition: Disposition
    /// Why.
    public var reason: DeliveryReason
    /// The delivered content (the original payload with no attachments unless `modified`).
    public var content: ValidatedContent
    /// The extension run, nil when no extension ran.
    public var extensionReport: ExtensionReport?
    /// The content extension presenting it, nil when none.
    public var presentation: Presentation?
    /// What happens to the badge.
    public var badgeEffect: BadgeEffect
    /// The app's state as resolved (header, app-states table, `defaultAppState`, `notRunning`).
    public var appState: AppState
    /// Where ``appState`` came from.
    public var appStateSource: AppStateSource
    /// The app method called, nil when none.
    public var appCallback: AppCallback?
    /// Why the app is launched, nil when it is not.
    public var launch: LaunchTrigger?
    /// When the decision was made.
    public var deliveredAt: Date
    /// Where routing sent the request; nil when it was not routed (discarded, or kept from an
    /// extension by gating rules 1 to 4).
    package var route: ExtensionRoute? = nil
    /// The row of the app-side table that decided ``appCallback`` and ``launch``; nil when the
    /// delivery was discarded as expired, before the app side was decided.
    public var appSideRule: AppSideRule? = nil
    /// What the user sees (section 17); nil outside its conditions (17.1).
    public var userAlert: UserAlert? = nil
    /// Whether a widgets or controls push reloads them (section 18); nil for other push types.
    public var widgetReload: Bool? = nil
    /// What a Live Activity push did (section 14.6); nil for other pushes, discarded ones and the
    /// legacy profile.
    public var liveActivity: LiveActivityReport? = nil
    /// The broadcast's channel ID (section 15); nil for a device request.
    public var channelID: String? = nil
    /// The activities record that follows the delivery (section 14.6), nil when the activity did
    /// not change.
    package var activityChange: ActivityChange? {
        get { activityChangeBox?.change }
        set { activityChangeBox = newValue.map(ActivityChangeBox.init) }
    }
    /// ``activityChange`` behind one reference: a whole activity entry inline would make every
    /// delivery, most of which have none, several hundred bytes larger to copy.
    var activityChangeBox: ActivityChangeBox? = nil
    /// The stored key of a notification delivered when its device came back online (section
    /// 16.3): a stored tombstone follows its other records. Nil for a request delivered at once.
    public var storedKey: String? = nil
}

/// An ``ActivityChange`` boxed, immutable.
final class ActivityChangeBox: Sendable {
    let change: ActivityChange

    init(_ change: ActivityChange) {
        self.change = change
    }
}
