public import Foundation
public import Notifications
import Records

/// Everything decided for one valid request: the content delivered and the app's side of it.
///
/// A value with copy-on-write storage: its fields live behind one reference, so a copy (every
/// `DispatchResult` accessor that reads a delivery, each stage of the worker that passes one on)
/// is one retain instead of one per string and array inside it, which was a fifth of the
/// reference counting of a gate-only record. A change copies the fields first when another
/// delivery shares them, so deliveries never see each other's changes.
public struct Delivery: Sendable {
    /// The fields, as a plain value.
    private struct Fields: Sendable {
        var request: NotificationRequest
        var disposition: Disposition
        var reason: DeliveryReason
        var content: ValidatedContent
        var extensionReport: ExtensionReport?
        var presentation: Presentation?
        var badgeEffect: BadgeEffect
        var appState: AppState
        var appStateSource: AppStateSource
        var appCallback: AppCallback?
        var launch: LaunchTrigger?
        var deliveredAt: Date
        var route: ExtensionRoute? = nil
        var appSideRule: AppSideRule? = nil
        var userAlert: UserAlert? = nil
        var widgetReload: Bool? = nil
        var liveActivity: LiveActivityReport? = nil
        var channelID: String? = nil
        var activityChangeBox: ActivityChangeBox? = nil
        var storedKey: String? = nil
        var badgeCount: Int? = nil
        var ledger: BadgeLedgerVerdict? = nil
        var settings: NotificationSettings? = nil
    }

    /// The fields behind one reference (``CopyOnWrite``).
    private var storage: CopyOnWrite<Fields>

    /// Makes a delivery.
    init(
        request: NotificationRequest,
        disposition: Disposition,
        reason: DeliveryReason,
        content: ValidatedContent,
        extensionReport: ExtensionReport?,
        presentation: Presentation?,
        badgeEffect: BadgeEffect,
        appState: AppState,
        appStateSource: AppStateSource,
        appCallback: AppCallback?,
        launch: LaunchTrigger?,
        deliveredAt: Date,
        route: ExtensionRoute? = nil,
        appSideRule: AppSideRule? = nil,
        userAlert: UserAlert? = nil,
        widgetReload: Bool? = nil,
        liveActivity: LiveActivityReport? = nil,
        channelID: String? = nil,
        storedKey: String? = nil
    ) {
        storage = CopyOnWrite(
            Fields(
                request: request, disposition: disposition, reason: reason, content: content,
                extensionReport: extensionReport, presentation: presentation, badgeEffect: badgeEffect,
                appState: appState, appStateSource: appStateSource, appCallback: appCallback, launch: launch,
                deliveredAt: deliveredAt, route: route, appSideRule: appSideRule, userAlert: userAlert,
                widgetReload: widgetReload, liveActivity: liveActivity, channelID: channelID, storedKey: storedKey))
    }

    /// The validated request.
    public var request: NotificationRequest {
        get { storage.fields.request }
        set { storage.fields.request = newValue }
    }

    /// Modified, original or discarded.
    public var disposition: Disposition {
        get { storage.fields.disposition }
        set { storage.fields.disposition = newValue }
    }

    /// Why.
    public var reason: DeliveryReason {
        get { storage.fields.reason }
        set { storage.fields.reason = newValue }
    }

    /// The delivered content (the original payload with no attachments unless `modified`).
    public var content: ValidatedContent {
        get { storage.fields.content }
        set { storage.fields.content = newValue }
    }

    /// The extension run, nil when no extension ran.
    public var extensionReport: ExtensionReport? {
        get { storage.fields.extensionReport }
        set { storage.fields.extensionReport = newValue }
    }

    /// The content extension presenting it, nil when none.
    public var presentation: Presentation? {
        get { storage.fields.presentation }
        set { storage.fields.presentation = newValue }
    }

    /// What happens to the badge.
    public var badgeEffect: BadgeEffect {
        get { storage.fields.badgeEffect }
        set { storage.fields.badgeEffect = newValue }
    }

    /// The app's state as resolved (header, app-states table, `defaultAppState`, `notRunning`).
    public var appState: AppState {
        get { storage.fields.appState }
        set { storage.fields.appState = newValue }
    }

    /// Where ``appState`` came from.
    public var appStateSource: AppStateSource {
        get { storage.fields.appStateSource }
        set { storage.fields.appStateSource = newValue }
    }

    /// The app method called, nil when none.
    public var appCallback: AppCallback? {
        get { storage.fields.appCallback }
        set { storage.fields.appCallback = newValue }
    }

    /// Why the app is launched, nil when it is not.
    public var launch: LaunchTrigger? {
        get { storage.fields.launch }
        set { storage.fields.launch = newValue }
    }

    /// When the decision was made.
    public var deliveredAt: Date {
        get { storage.fields.deliveredAt }
        set { storage.fields.deliveredAt = newValue }
    }

    /// Where routing sent the request; nil when it was not routed (discarded, or kept from an
    /// extension by gating rules 1 to 4).
    package var route: ExtensionRoute? {
        get { storage.fields.route }
        set { storage.fields.route = newValue }
    }

    /// The row of the app-side table that decided ``appCallback`` and ``launch``; nil when the
    /// delivery was discarded as expired, before the app side was decided.
    public var appSideRule: AppSideRule? {
        get { storage.fields.appSideRule }
        set { storage.fields.appSideRule = newValue }
    }

    /// What the user sees (section 17); nil outside its conditions (17.1).
    public var userAlert: UserAlert? {
        get { storage.fields.userAlert }
        set { storage.fields.userAlert = newValue }
    }

    /// Whether a widgets or controls push reloads them (section 18); nil for other push types.
    public var widgetReload: Bool? {
        get { storage.fields.widgetReload }
        set { storage.fields.widgetReload = newValue }
    }

    /// What a Live Activity push did (section 14.6); nil for other pushes, discarded ones and the
    /// legacy profile.
    public var liveActivity: LiveActivityReport? {
        get { storage.fields.liveActivity }
        set { storage.fields.liveActivity = newValue }
    }

    /// The broadcast's channel ID (section 15); nil for a device request.
    public var channelID: String? {
        get { storage.fields.channelID }
        set { storage.fields.channelID = newValue }
    }

    /// The activities record that follows the delivery (section 14.6), nil when the activity did
    /// not change.
    package var activityChange: ActivityChange? {
        get { activityChangeBox?.change }
        set { activityChangeBox = newValue.map(ActivityChangeBox.init) }
    }

    /// ``activityChange`` behind one reference: a whole activity entry inline would make the
    /// storage of every delivery, most of which have none, several hundred bytes larger (and a
    /// copy-on-write copy that much longer).
    var activityChangeBox: ActivityChangeBox? {
        get { storage.fields.activityChangeBox }
        set { storage.fields.activityChangeBox = newValue }
    }

    /// `badgeCount` (section 21.2): the count the badge ledger holds after this delivery, for an
    /// app that keeps one; nil for every other app and for broadcasts.
    public var badgeCount: Int? {
        get { storage.fields.badgeCount }
        set { storage.fields.badgeCount = newValue }
    }

    /// The badge ledger of an app that keeps one (section 21): a badges record follows the
    /// delivery when it changed.
    package var ledger: BadgeLedgerVerdict? {
        get { storage.fields.ledger }
        set {
            storage.fields.ledger = newValue
            storage.fields.badgeCount = newValue?.after
        }
    }

    /// The stored key of a notification delivered when its device came back online (section
    /// 16.3): a stored tombstone follows its other records. Nil for a request delivered at once.
    public var storedKey: String? {
        get { storage.fields.storedKey }
        set { storage.fields.storedKey = newValue }
    }

    /// The user's notification settings the delivery was decided with (section 20): those of the
    /// token's devices entry, nil when the token has none (the defaults). Not part of the delivery
    /// record, which gains no field: `explain` and lint read it to say what the user met.
    package var settings: NotificationSettings? {
        get { storage.fields.settings }
        set { storage.fields.settings = newValue }
    }
}

/// An ``ActivityChange`` boxed, immutable.
final class ActivityChangeBox: Sendable {
    let change: ActivityChange

    init(_ change: ActivityChange) {
        self.change = change
    }
}
