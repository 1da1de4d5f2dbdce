package import Foundation
import Notifications
package import Records

extension Dispatcher {
    /// The rules of SEMANTICS sections 1 to 7 and 11 to 18 for one request record, read where it
    /// lies: validation, the token checks and the request limit (section 12), expiry, store and
    /// forward, Live Activities, the app's side, gating and routing, and what follows from the
    /// content shown. The one decision every request record goes through: the worker on a view of
    /// librdkafka's message (or of the one copy of a record that waited), offline on a view of
    /// the JSON line's record.
    ///
    /// Nothing is written here; ``decide(_:tables:now:into:)`` writes what a verdict decided now.
    /// Records of one token must be decided in order: the request limit counts them as they are
    /// accepted (each record once: a record decided again, after a refused output, is not counted
    /// again).
    ///
    /// - Parameter now: the time of processing (section 11.1): `receivedAt`, `deliveredAt`, expiry
    ///   and the request limit's window.
    @inline(__always)
    package func verdict(_ record: borrowing RecordView, tables: StateTables, now: Date) -> RequestVerdict {
        switch validator.validateInPlace(record) {
        case .broadcast:
            return .waits(RequestWait(kind: .broadcast, request: nil, receivedAt: now))
        case .rejected(let rejection):
            return .deadLetter(rejection)
        case .request(let request):
            var delivery = DeliveryVerdict(receivedAt: now)
            switch checkedRules(request, record, tables: tables, now: now, into: &delivery) {
            case .delivery: return .delivery(request, delivery)
            case .deadLetter(let rejection): return .deadLetter(rejection)
            case .waits(let wait): return .waits(wait)
            }
        }
    }

    /// What the rules made of a valid request (``rules(_:_:app:tables:device:now:receivedAt:storedKey:into:)``):
    /// a delivery, decided in the verdict the caller passed in, a dead letter, or a wait. The
    /// delivery's verdict is not carried here: a verdict holds strings and arrays (a category, a
    /// route's name, presentation options), and the enum's payload would be copied out of it,
    /// with a retain each, for every request.
    enum RuleOutcome {
        case delivery
        case deadLetter(Rejection)
        case waits(RequestWait)
    }

    /// The checks of section 12 and the ledger's (section 21.1) on a valid request, then the
    /// rules (``rules(_:_:app:tables:device:now:receivedAt:storedKey:into:)``).
    @inline(__always)
    func checkedRules(
        _ request: ValidatedRequest, _ record: borrowing RecordView, tables: StateTables, now: Date, into delivery: inout DeliveryVerdict
    ) -> RuleOutcome {
        let app = app(of: request, in: record)
        if let rejection = badgeIncrementRejection(of: request, app: app) { return .deadLetter(rejection) }
        // A valid request has a key: the token check refused every other.
        let device = tables.devices.device(forKeyOf: record)
        if let device, let rejection = tokenRejection(of: request, in: record, device: device) { return .deadLetter(rejection) }
        if let rejection = rateRejection(of: record, tables: tables, now: now) { return .deadLetter(rejection) }
        return rules(request, record, app: app, tables: tables, device: device, now: now, receivedAt: now, storedKey: nil, into: &delivery)
    }

    /// The rules after the checks of sections 1, 2 and 12, for a valid request: what sections 3
    /// to 7, 13 to 18 and 20 to 21 make of it, or what it waits for.
    ///
    /// An app that keeps a badge ledger has its increment written into the payload first (section
    /// 21.2): every rule after it reads the payload the device receives.
    /// - Parameters:
    ///   - app: the request's compiled app (``app(of:in:)``).
    ///   - receivedAt: when it was received (`now`, or a stored notification's own time).
    ///   - storedKey: the stored key of a notification delivered because its device came back
    ///     online (section 16.3): it is not stored again.
    ///   - verdict: set to the delivery's verdict when the outcome is ``RuleOutcome/delivery``.
    @inline(__always)
    func rules(
        _ request: ValidatedRequest, _ record: borrowing RecordView, app: AppRoutes?, tables: StateTables, device: DeviceEntry?,
        now: Date, receivedAt: Date, storedKey: String?, into verdict: inout DeliveryVerdict
    ) -> RuleOutcome {
        let (appState, appStateSource) = AppStateSource.resolve(
            override: request.appStateOverride,
            fromTable: tables.appStates.appState(forKeyOf: record),
            appDefault: app?.settings.defaultAppState)
        let ledger = ledger(of: request, record, app: app, tables: tables)
        let traits = ledger?.traits(of: request.payload.traits) ?? request.payload.traits
        verdict = DeliveryVerdict(
            disposition: .discarded, reason: .expired, appState: appState, appStateSource: appStateSource, appSideRule: nil,
            route: nil, completion: nil, receivedAt: receivedAt, storedKey: storedKey, ledger: consume ledger)
        let beginning = beginning(
            pushType: request.pushType, traits: traits, hidesViewButton: traits.hidesViewButton, expiration: request.expiration,
            app: app, appState: appState, device: device, isStoredDelivery: storedKey != nil, now: now)
        // Consumed: the payloads (the route, the app side) move into the verdict rather than
        // being copied out and destroyed with the enum, through the runtime's value witnesses.
        switch consume beginning {
        case .expired:
            break
        case .stored:
            // Tried once and not stored (section 16.1): decided now, nothing changes.
            guard request.expirationIsZero else {
                return .waits(RequestWait(kind: .store, request: request, appState: appState, appStateSource: appStateSource, receivedAt: receivedAt))
            }
            verdict.reason = .notStored
        case .liveActivity:
            return .waits(
                RequestWait(
                    kind: .liveActivity, request: request, appState: appState, appStateSource: appStateSource, receivedAt: receivedAt,
                    storedKey: storedKey))
        case .forceQuitDiscarded(let side):
            verdict.appSideRule = side.rule
            verdict.reason = .appForceQuit
        case .unmodified(let side, let reason, let route):
            verdict.disposition = .original
            verdict.reason = reason
            verdict.appSideRule = side.rule
            verdict.route = route
            verdict.settings = device?.settings
            let completion = completion(
                pushType: request.pushType, traits: traits, appState: appState, context: Context(side: side, app: app, device: device))
            verdict.completion = completion
            if let counted = verdict.ledger?.delivered(effect: completion.badgeEffect, traits: traits) {
                guard self.record(counted, of: record, tables: tables, now: now) else { return .deadLetter(ledgerFull()) }
                verdict.ledger = counted
            }
        case .extensionNeeded(let side, let route):
            return .waits(
                RequestWait(
                    kind: .serviceExtension(side: side, route: route, app: app, device: device), request: request, appState: appState,
                    appStateSource: appStateSource, receivedAt: receivedAt, storedKey: storedKey, ledger: verdict.ledger))
        }
        return .delivery
    }

    /// `ServiceUnavailable` for a request whose badge count the full ledger cannot keep.
    func ledgerFull() -> Rejection {
        Rejection(
            .serviceUnavailable,
            "The badges table is full: \(configuration.dispatch.stateLimits.badges) counts (dispatch.stateLimits.badges); the device's badge count cannot be kept.")
    }

    /// The compiled app a request is for: a configured topic's (found by its index, without
    /// hashing the bundle ID); nil for `mdm`, which no app settings apply to, and for a topic
    /// of no configured app.
    func app(of request: ValidatedRequest, in record: borrowing RecordView) -> AppRoutes? {
        switch (request.pushType, request.topic) {
        case (.mdm, _): nil
        case (_, .known(let index)): appsByTopic[index]
        // Not a configured topic: an app is configured only when `apps` names it.
        case (_, .given): apps.isEmpty ? nil : apps[bundleID(of: request, in: record)]
        }
    }

    /// `TooManyRequests` (section 12.3) when `dispatch.tooManyRequests` is set and the record's
    /// token already had the limit of accepted requests in the window; otherwise the record is
    /// counted as accepted, once (by its position: a record decided again is not counted again).
    /// Not configured: nothing is counted, nothing is read.
    func rateRejection(of record: borrowing RecordView, tables: StateTables, now: Date) -> Rejection? {
        guard let rates = tables.requestRates else { return nil }
        let token = record.withUnsafeKeyBytes { DeviceToken.lowercased($0 ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
        let milliseconds = Int64((now.timeIntervalSince1970 * 1_000).rounded(.down))
        let position = RequestRateWindow.RecordPosition(partition: record.partition, offset: record.offset)
        guard let count = rates.admit(token, now: milliseconds, record: position) else { return nil }
        let limit = rates.limit
        return Rejection(
            .tooManyRequests,
            "The device token already had \(count) accepted requests in the last \(DurationText.spell(limit.window)); dispatch.tooManyRequests allows \(limit.limit).")
    }
}
