import Foundation
package import Notifications

/// What the rules made of one request record (``Dispatcher/verdict(_:tables:now:)``), before
/// anything is written: the one decision every request goes through, in the worker and offline.
///
/// A plain value that describes the record by where its parts lie (``ValidatedRequest``): it is
/// read against the same record's bytes, lent by librdkafka or by the one copy kept of a record
/// that waits.
package enum RequestVerdict: Sendable {
    /// Invalid (sections 1, 2 and 12): its dead letter, then, for the token reasons, its feedback
    /// record (section 12.2).
    case deadLetter(Rejection)
    /// Decided now: its delivery (section 5), then its launch when the app side says so.
    case delivery(ValidatedRequest, DeliveryVerdict)
    /// It waits for something before its delivery is known (a service extension, the stored
    /// table, a Live Activity, a broadcast's fan-out): see ``RequestWait``.
    case waits(RequestWait)
}

/// The delivery of a request decided without waiting: what sections 3 to 7 and 17 to 18 made of
/// it, for content that is the request's own payload.
package struct DeliveryVerdict: Sendable {
    /// Original, or discarded.
    var disposition: Disposition
    /// Why.
    var reason: DeliveryReason
    /// The app's state, and where it came from.
    var appState: AppState
    var appStateSource: AppStateSource
    /// The row of the app side's table that decided (nil for an expired delivery, decided first).
    var appSideRule: AppSideRule?
    /// Where routing sent it (nil unless gating let it through to routing).
    var route: ExtensionRoute?
    /// What follows from the content shown; nil for a discarded delivery, which shows none.
    var completion: Dispatcher.Completion?
    /// When the request was received: `now` for a request, the original time for a stored
    /// notification delivered when its device came back (section 16.3).
    var receivedAt: Date
    /// The stored key of a notification delivered because its device came back (a stored
    /// tombstone follows its delivery); nil for a request delivered as it arrives.
    var storedKey: String?
    /// The user's notification settings it was decided with (section 20), for those who explain
    /// it; nil for a discarded delivery, decided before the settings are read.
    var settings: NotificationSettings? = nil
    /// The badge ledger of an app that keeps one (section 21): the badge an increment writes into
    /// the payload (not into a discarded delivery's), the count the delivery carries, and whether
    /// a badges record follows; nil for every other app.
    var ledger: BadgeLedgerVerdict? = nil

    /// What it is counted as.
    var labels: DispatchResult.Labels {
        DispatchResult.Labels(outcome: .delivery(disposition, reason), launch: completion?.launch, hasExtensionReport: false)
    }
}

extension DeliveryVerdict {
    /// A verdict that decides nothing yet, for the rules to fill in
    /// (``Dispatcher/rules(_:_:app:tables:device:now:receivedAt:storedKey:into:)``). In an
    /// extension, so that the memberwise initializer stays.
    init(receivedAt: Date) {
        self.init(
            disposition: .discarded, reason: .expired, appState: .notRunning, appStateSource: .fallback, appSideRule: nil, route: nil,
            completion: nil, receivedAt: receivedAt, storedKey: nil)
    }
}

/// A request that waits: everything the rules decided before the wait, to go on from there with
/// the record's owned copy (``Dispatcher/proceed(_:record:tables:now:)``).
///
/// A class, set once: the few requests that wait pay one allocation, and every enum that may
/// carry a wait (``RequestVerdict``, ``Dispatcher/Decided``, the worker's steps) holds a
/// reference rather than some 430 bytes, which Swift copied with `memcpy` at each move, for
/// every request, waiting or not (`bench counts`: about 12 copies of 433 bytes a request).
package final class RequestWait: Sendable {
    /// What it waits for.
    enum Kind: Sendable {
        /// Its service extension runs first (sections 3 and 4).
        case serviceExtension(side: AppSideDecision, route: AppRoutes.Route, app: AppRoutes?, device: DeviceEntry?)
        /// Its device is offline: it is stored (section 16.1), a change of the stored table.
        case store
        /// A Live Activity push: a command against its activity (section 14).
        case liveActivity
        /// A broadcast request (section 15): validated and fanned out on its copy.
        case broadcast
    }

    let kind: Kind
    /// The request as validated; nil for a broadcast, validated by its own rules.
    let request: ValidatedRequest?
    /// The app's state, and where it came from (unused for a broadcast).
    let appState: AppState
    let appStateSource: AppStateSource
    /// When the request was received (``DeliveryVerdict/receivedAt``).
    let receivedAt: Date
    /// The stored key of a stored notification being delivered (``DeliveryVerdict/storedKey``).
    let storedKey: String?
    /// The badge ledger before the wait (``DeliveryVerdict/ledger``).
    let ledger: BadgeLedgerVerdict?

    init(
        kind: Kind, request: ValidatedRequest?, appState: AppState = .notRunning, appStateSource: AppStateSource = .fallback,
        receivedAt: Date, storedKey: String? = nil, ledger: BadgeLedgerVerdict? = nil
    ) {
        self.kind = kind
        self.request = request
        self.appState = appState
        self.appStateSource = appStateSource
        self.receivedAt = receivedAt
        self.storedKey = storedKey
        self.ledger = ledger
    }
}
