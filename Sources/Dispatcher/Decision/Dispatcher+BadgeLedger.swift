import Foundation
import Notifications
import Records

/// What the badge ledger (SEMANTICS section 21) makes of one request to an app that keeps one:
/// the count before it, the badge an increment writes into its payload, and what the ledger holds
/// after its delivery.
package struct BadgeLedgerVerdict: Sendable, Hashable {
    /// The ledger's key, `<normalised device token>/<bundle ID>`.
    package var key: String
    /// The count before this request (`c`: 0 when the ledger has none).
    package var before: Int
    /// The request's `badge-increment` (N), nil without one.
    package var increment: Int?
    /// The badge written into the payload for the request's `badge-increment` (max(0, c + N));
    /// nil without one.
    package var inserted: Int?
    /// The count after the delivery: the delivered badge when the device's badge changed, else
    /// ``before`` (section 21.3).
    package var after: Int
    /// Whether the ledger changed: a badges record follows the delivery.
    package var changes = false

    /// The ledger as it is before the request's delivery, nothing changed yet: `increment`, when
    /// given, writes max(0, before + increment) into the payload.
    init(key: String, before: Int, increment: Int?) {
        self.key = key
        self.before = before
        self.increment = increment
        inserted = increment.map { max(0, before + $0) }
        after = before
    }

    /// The traits of the payload the device receives: the increment's badge written in.
    func traits(of original: Payload.Traits) -> Payload.Traits {
        guard let inserted else { return original }
        var traits = original
        traits.hasBadge = true
        traits.badgeIsZero = inserted == 0
        traits.badgeNumber = inserted
        return traits
    }

    /// What follows a delivery whose content has `delivered` traits and whose badge does
    /// `effect` (section 21.3): the ledger follows a badge that is set or cleared, to the number
    /// the delivered payload carries (0 for the legacy profile's clear of a payload without one;
    /// a negative number, which no device shows, as 0).
    func delivered(effect: BadgeEffect, traits delivered: Payload.Traits) -> BadgeLedgerVerdict {
        guard effect == .set || effect == .clear else { return self }
        var changed = self
        changed.after = delivered.hasBadge ? max(0, delivered.badgeNumber) : 0
        changed.changes = true
        return changed
    }
}

extension Dispatcher {
    /// The badge ledger of a valid request to an app that keeps one (`apps.B.badgeLedger`), as
    /// it stands before the request: nil for every other app (and for `mdm`, which no app's
    /// settings apply to).
    ///
    /// A record decided again (after a refused output) reads the count from before its first
    /// decision, so its increment is applied once (``BadgesTable/count(forKey:decidedBy:)``).
    func ledger(
        of request: ValidatedRequest, _ record: borrowing RecordView, app: AppRoutes?, tables: StateTables
    ) -> BadgeLedgerVerdict? {
        guard let app, app.settings.badgeLedger else { return nil }
        let token = record.withUnsafeKeyBytes { DeviceToken.lowercased($0 ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
        let key = BadgesTable.key(deviceToken: token, bundleID: bundleID(of: request, in: record))
        let position = RequestRateWindow.RecordPosition(partition: record.partition, offset: record.offset)
        let before = tables.badges?.count(forKey: key, decidedBy: position) ?? 0
        return BadgeLedgerVerdict(key: key, before: before, increment: request.badgeIncrement)
    }

    /// Writes a changed count into the ledger (the rules, section 21.3), as the record at
    /// `record`'s position decided it.
    /// - Returns: false when the ledger is full and has no count for the key yet: the request
    ///   cannot be counted (``RejectionReason/serviceUnavailable``).
    func record(_ ledger: BadgeLedgerVerdict, of record: borrowing RecordView, tables: StateTables, now: Date) -> Bool {
        guard ledger.changes, let badges = tables.badges else { return true }
        let position = RequestRateWindow.RecordPosition(partition: record.partition, offset: record.offset)
        return badges.set(ledger.key, to: ledger.after, updatedAt: Timestamp.milliseconds(now), decidedBy: position, before: ledger.before)
    }

    /// `BadBadgeIncrement` for a request with `badge-increment` that cannot have one (section
    /// 21.1): its app keeps no ledger, it is not an alert, or its payload sets `aps.badge`.
    func badgeIncrementRejection(of request: ValidatedRequest, app: AppRoutes?) -> Rejection? {
        guard let increment = request.badgeIncrement else { return nil }
        let problem: String
        if app?.settings.badgeLedger != true {
            problem = "the app keeps no badge ledger (apps.<bundle ID>.badgeLedger is not true)"
        } else if request.pushType != .alert {
            problem = "the push type is \(request.pushType.rawValue), and only an alert's badge is counted"
        } else if request.payload.traits.hasBadge {
            problem = "the payload sets aps.badge itself"
        } else {
            return nil
        }
        return Rejection(
            .badBadgeIncrement, "The badge-increment header \(increment) cannot be applied: \(problem).", check: .badgeIncrementAllowed)
    }
}
