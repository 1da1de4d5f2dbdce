package import Foundation
import Notifications
package import Records

extension Dispatcher {
    /// Section 16.1 for a valid request whose device is offline (`delivery` is its discarded draft):
    /// `apns-expiration` 0 gives a `not-stored` delivery at once; otherwise the request is stored
    /// under `<token>/<bundle ID>`, after the delivery of the notification it replaces, if any.
    /// A new key that `dispatch.stateLimits.stored` has no room for is a `ServiceUnavailable` dead letter.
    func storeOrDrop(_ delivery: Delivery, record: RequestRecord, tables: StateTables, now: Date) -> DispatchResult {
        let request = delivery.request
        if request.expirationIsZero {
            var dropped = delivery
            dropped.reason = .notStored
            return fitted(DispatchResult(.delivered(dropped), topics: configuration.topics), record: record)
        }
        let notification = StoredNotification(request, storagePeriod: configuration.dispatch.storagePeriod)
        let previous = tables.stored?.notification(forKey: notification.key)
        if let table = tables.stored, !table.store(notification) {
            return deadLettered(
                record,
                Rejection(
                    .serviceUnavailable,
                    "The stored-notifications table is full: \(table.limit) notifications (dispatch.stateLimits.stored); the notification for an offline device cannot be stored."),
                at: now)
        }
        let replaced = previous.map { old in
            let reason: DeliveryReason =
                old.expiresAt < Timestamp.milliseconds(now) ? .expired
                : old.collapseID != nil && old.collapseID == request.collapseID ? .collapsed : .superseded
            return discardedDelivery(of: old, reason: reason, source: record.source, tables: tables, now: now)
        }
        return fitted(DispatchResult(.stored(notification, replaced: replaced), topics: configuration.topics, limit: outputLimit), record: record)
    }

    /// The discarded delivery of a stored notification (section 5's discarded fields): its own
    /// `apns-id`, `traceparent` and `receivedAt`; `deliveredAt` now. For an app with a badge
    /// ledger, `badgeCount` is the ledger's count now: a notification that never reaches the
    /// device changes nothing (section 21.2).
    func discardedDelivery(
        of notification: StoredNotification, reason: DeliveryReason, source: TopicPartitionOffset, tables: StateTables, now: Date
    ) -> Delivery {
        let request = notification.request(source: source)
        let app = request.pushType == .mdm ? nil : apps[request.bundleID]
        let (appState, appStateSource) = AppStateSource.resolve(
            request, appStates: tables.appStates, appDefault: app?.settings.defaultAppState)
        var delivery = Delivery(
            request: request, disposition: .discarded, reason: reason, content: ValidatedContent(payload: request.payload),
            extensionReport: nil, presentation: nil, badgeEffect: .unchanged, appState: appState, appStateSource: appStateSource,
            appCallback: nil, launch: nil, deliveredAt: now)
        if app?.settings.badgeLedger == true {
            let key = BadgesTable.key(deviceToken: notification.deviceToken, bundleID: request.bundleID)
            delivery.badgeCount = tables.badges?.count(forKey: key) ?? 0
        }
        return delivery
    }

    /// A stored tombstone (section 16.3): the key, no value, the stored record's headers.
    func storedTombstone(_ key: String, apnsID: MessageID, traceparent: RecordBytes?) -> OutputRecord {
        OutputRecord(
            kind: .stored, topic: configuration.topics.stored, key: Array(key.utf8),
            headers: DispatchResult.messageHeaders(apnsID: apnsID.utf8, traceparent: traceparent), value: nil)
    }

    /// Applies one record of the devices topic to `devices` and, when it brings an offline token
    /// online (`online` true or absent, or a null value: section 16.3), takes what is stored for
    /// that token out of `tables.stored` and returns the steps that deliver it, in stored order:
    /// each one's delivery (run through sections 3 to 7 and 13 to 18 as if it arrived now, its
    /// service extension included), launch, activities record, then its stored tombstone.
    /// - Parameters:
    ///   - source: where the devices record came from (the `OutputRejected` dead letter of a
    ///     delivery that cannot be written names it).
    ///   - now: the devices record's time of processing: the deliveries' `deliveredAt`.
    package func applyDevicesRecord(
        key: RecordBytes?, value: RecordBytes?, devices: DevicesTable, tables: StateTables, source: TopicPartitionOffset,
        now: Date
    ) -> DevicesRecordOutcome {
        let token = key.flatMap(AppStatesTable.normalisedToken)
        let before = token.flatMap(devices.device(forDeviceToken:))
        let update = devices.apply(key: key, value: value)
        guard let token, before?.online == false else { return DevicesRecordOutcome(update: update, steps: []) }
        let after = devices.device(forDeviceToken: token)
        if case .invalid = update { return DevicesRecordOutcome(update: update, steps: []) }
        guard after?.online ?? true else { return DevicesRecordOutcome(update: update, steps: []) }
        return DevicesRecordOutcome(update: update, steps: deliverStored(forDeviceToken: token, device: after, tables: tables, source: source, now: now))
    }

    /// The steps delivering every notification stored for `deviceToken`, in stored order, each
    /// taken out of `tables.stored` (section 16.3).
    package func deliverStored(
        forDeviceToken deviceToken: String, device: DeviceEntry?, tables: StateTables, source: TopicPartitionOffset, now: Date
    ) -> [DispatchStep] {
        guard let stored = tables.stored, !stored.isEmpty else { return [] }
        return stored.keys(forDeviceToken: deviceToken).compactMap { key in
            guard let notification = stored.remove(key) else { return nil }
            if notification.expiresAt < Timestamp.milliseconds(now) {
                let record = RequestRecord(
                    key: Array(notification.deviceToken.utf8), headers: notification.headers, value: notification.payload.serialized(),
                    source: source)
                var delivery = discardedDelivery(of: notification, reason: .expired, source: source, tables: tables, now: now)
                delivery.storedKey = key
                return .decided(fitted(DispatchResult(.delivered(delivery), topics: configuration.topics), record: record))
            }
            return deliverStored(notification, key: key, device: device, tables: tables, now: now, source: source)
        }
    }
}

/// What a devices record did (``Dispatcher/applyDevicesRecord(key:value:devices:tables:source:now:)``):
/// its update of the devices table, and the steps delivering what was stored for a token it
/// brought back online (none otherwise).
package struct DevicesRecordOutcome: Sendable {
    /// What the record did to the devices table.
    package var update: DevicesTable.Update
    /// The steps, one per stored notification, in stored order.
    package var steps: [DispatchStep]
}
