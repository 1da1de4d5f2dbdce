import Dispatcher
import Notifications

/// The sentences of sections 14 to 16 that `explain` quotes, each once (SEMANTICS.md, word for
/// word but for Markdown marks; Apple's where SEMANTICS quotes Apple).
extension Citation {
    /// The activity a push addresses (section 14.2).
    static let activityAddressed = Citation(
        .contract(section: "14.2"),
        "start: the request's key is a push-to-start token. The activities table is not consulted, and the push creates a new activity. Its activity token is the lowercase hex SHA-256 of the UTF-8 string <normalised key>/<apnsId>"
    )
    /// An update or end addresses an entry of the app.
    static let activityOfApp = Citation(
        .contract(section: "14.2"),
        "update, end: the request's key (normalised) is the activity token. The activities-table entry for it is the activity when its bundleId equals the request's bundle ID. Otherwise there is no activity."
    )
    /// The first row that matches decides (section 14.3).
    static let activityResultOrder = Citation(.contract(section: "14.3"), "The first row that matches decides.")
    /// Pushes after the end (Apple, as the contract quotes it).
    static let endedIgnored = Citation(
        .contract(section: "14.3"),
        "Apple documents row 5 (\"the system ignores an ActivityKit push notification if it arrives after the Live Activity ended\")")
    /// Equal timestamps are stale.
    static let staleTimestamp = Citation(.contract(section: "14.3"), "Treating an equal timestamp as stale is a contract choice.")
    /// Dismissal (section 14.4).
    static let dismissal = Citation(
        .contract(section: "14.4"),
        "With no dismissal-date, the dismissal date is E + 14400 (the default: up to four hours on the Lock Screen). With a dismissal-date D, it is min(D, E + 14400). A date in the past dismisses at once."
    )
    /// The budget (section 14.5).
    static let budget = Citation(
        .contract(section: "14.5"),
        "When the count has reached the app's liveActivityBudget, a further priority-10 update or end is throttled (dropped, not delayed)")
    /// The output (section 14.6).
    static let activityOutput = Citation(
        .contract(section: "14.6"),
        "When the result is started, updated or ended, the delivery is followed by one record on the activities topic: key = the activity token, value = the new entry (11.2 shape, every field present), header apns-id (and traceparent)."
    )
    /// The activities table's limit (the product's decision).
    static let activitiesLimit = Citation(
        .docs(page: "docs/rules.md"),
        "a start that would exceed dispatch.stateLimits.activities first drops the dismissed activity with the earliest dismissal date (its tombstone follows the new activity's record); with none dismissed, the request is a ServiceUnavailable dead letter (503)"
    )
    /// The broadcast checks' order (section 15).
    static let broadcastCheckOrder = Citation(
        .contract(section: "15"), "Checks, in this order. The first failure is the reason, with dlq-status 400 unless noted")
    /// A broadcast's dead letter (section 15).
    static let broadcastDeadLetter = Citation(
        .contract(section: "15"),
        "A broadcast's dead letter follows section 5 (headers unchanged, key as it was, which may be none).")
    /// The fan-out (section 15).
    static let fanOut = Citation(
        .contract(section: "15"),
        "A valid broadcast is applied to every activities-table entry whose channelId equals the channel ID and whose bundleId equals the bundle ID, in ascending order of activity token."
    )
    /// No subscriber.
    static let noSubscriber = Citation(.contract(section: "15"), "With no subscribed activity, a valid broadcast produces no output.")
    /// An expired broadcast.
    static let expiredBroadcast = Citation(
        .contract(section: "15"),
        "A broadcast whose apns-expiration has passed (section 5) gives every subscribed activity a discarded delivery with reason expired.")
    /// Offline devices (section 16.1).
    static let offline = Citation(
        .contract(section: "16.1"),
        "A device is offline when its devices-table entry has online false. A valid device request whose token is offline, and which is not already discarded as expired (section 5), is not delivered now")
    /// `apns-expiration` 0 (section 16.1).
    static let notStored = Citation(
        .contract(section: "16.1"),
        "apns-expiration is 0 (the header is present with the value 0; a request without the header is stored): APNs tries once and does not store the notification.")
    /// One notification per device and app (section 16.1).
    static let newestOnly = Citation(
        .contract(section: "16.1"),
        "APNs keeps only the newest notification per device and app. When that key already holds a stored notification, that one gets its delivery record now: discarded, reason expired when its expiresAt is before now; else collapsed when both requests have the same non-null apns-collapse-id; else superseded."
    )
    /// The stored table's limit (the product's decision).
    static let storedLimit = Citation(
        .docs(page: "docs/rules.md"),
        "a notification for a new key that would exceed dispatch.stateLimits.stored is a ServiceUnavailable dead letter (503)")

    /// The contract's rule behind one broadcast check.
    static func rule(of check: BroadcastCheck) -> Citation {
        let text: String
        switch check {
        case .duplicateHeaders: text = "DuplicateHeaders (section 1)."
        case .topic:
            text = "apns-topic missing or empty: MissingTopic. A topic that ends in any push-type suffix: TopicDisallowed (Apple: \"Ensure that no push type suffix is added to the bundle ID\"). The bundle ID not configured under apps while apps is non-empty: TopicDisallowed."
        case .pushType:
            text = "apns-push-type missing: MissingPushType. Not liveactivity compared without regard to ASCII case (Apple writes liveactivity, Liveactivity and LiveActivity): InvalidPushType."
        case .channelID:
            text = "apns-channel-id empty: MissingChannelId. Not standard base64 with padding, or longer than 64 characters: BadChannelId (contract choice for the length)."
        case .headerFormats:
            text = "apns-request-id (which takes the place of apns-id; same format rule and lowercase normalisation; derived as in section 1 when absent; an apns-id header is ignored): BadMessageId. apns-priority not 10 or 5: BadPriority. apns-expiration as in section 1: BadExpirationDate. apns-collapse-id and app-state are ignored."
        case .payload:
            text = "Payload: PayloadEmpty, then PayloadTooLarge over 5120 bytes (413), then InvalidPayload (the rules of section 2 and 14.1, loc objects allowed). event start is InvalidPayload too, because broadcast cannot start an activity."
        case .entitlement:
            text = "The app's entitlements lack broadcast (an app not configured has none): FeatureNotEnabled."
        case .channel: text = "No channels-table entry with this channel ID and this bundle ID: ChannelNotRegistered."
        }
        return Citation(.contract(section: "15"), text)
    }

    /// The contract's row of section 14.3 for `result`, as the table writes it.
    static func row(of result: LiveActivityResult) -> Citation {
        let text =
            switch result {
            case .malformed:
                "event or timestamp missing; start without attributes-type, attributes, content-state or alert text; update without content-state; both input-push-token and input-push-channel present | malformed | unchanged"
            case .channelUnknown: "start with input-push-channel naming no channels-table entry for this bundle ID | channel-unknown | none created"
            case .started:
                "start | started | a new entry: status active, timestamp T, attributesType, attributes, contentState, staleDate and relevanceScore from the payload, channelId = input-push-channel or null, dismissalDate null"
            case .noActivity: "update or end with no activity | no-activity | none"
            case .endedIgnored: "A.status is ended | ended-ignored | unchanged"
            case .staleIgnored: "T ≤ A.timestamp | stale-ignored | unchanged"
            case .throttled: "priority 10 and the activity's budget is spent (14.5) | throttled | unchanged"
            case .updated: "update | updated | timestamp T; contentState, staleDate, relevanceScore replaced by the payload's (absent: null)"
            case .ended: "end | ended | status ended, timestamp T, contentState replaced when the payload has one, dismissalDate (14.4)"
            }
        return Citation(.contract(section: "14.3"), text)
    }
}

extension BroadcastCheck: ExplainedCheck {
    var rule: Citation { .rule(of: self) }
    var isTopicAllowed: Bool { self == .topic }
    /// The check that gives the rejection's reason: each broadcast reason comes from one check.
    static func failed(_ rejection: Rejection) -> BroadcastCheck? { BroadcastCheck(giving: rejection.reason) }
    static var order: Citation { .broadcastCheckOrder }
    static var deadLetter: Citation { .broadcastDeadLetter }
}
