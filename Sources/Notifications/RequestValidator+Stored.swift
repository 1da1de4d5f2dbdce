import JSON
package import Records

extension RequestValidator {
    /// A stored notification (section 16.2) as a validated request of the record rebuilt from it
    /// (its headers as received, its payload compact) when its device comes back online (section
    /// 16.3): what was decided when it arrived, not checked again. A configuration changed since
    /// (an app no longer configured) does not refuse it: it is delivered as it was stored.
    ///
    /// - Parameters:
    ///   - record: the rebuilt record: the stored headers, in the order received, and the payload.
    ///   - bundleID: the stored bundle ID (the topic less its push type's suffix).
    ///   - traits: what the rules read of the stored payload.
    /// - Returns: nil when the stored headers have no `apns-topic` (a stored record written by
    ///   something else than the dispatcher).
    package func storedRequest(
        _ record: borrowing RecordView, pushType: PushType, priority: Priority, apnsID: MessageID, expiration: Int64?,
        bundleID: String, traits: Payload.Traits
    ) -> ValidatedRequest? {
        let positions = RequestHeaders.positions(of: record).positions
        guard let topicHeader = positions.topic else { return nil }
        let topic = record.withUnsafeHeaderBytes(topicHeader) { _, value -> ValidatedRequest.Topic in
            knownTopics.lookUp(value ?? UnsafeRawBufferPointer(start: nil, count: 0), pushType: pushType).map { .known($0) }
                ?? .given(bundleIDLength: bundleID.utf8.count)
        }
        let collapseID = positions.collapseID.flatMap { position in
            record.withUnsafeHeaderBytes(position) { _, value in (value?.isEmpty ?? true) ? nil : position }
        }
        let appState = positions.appState.flatMap { position in
            record.withUnsafeHeaderBytes(position) { _, value in value.flatMap { try? Self.appState($0) } }
        }
        // Applied when the notification is delivered, against the ledger as it is then (section 21.2).
        let badgeIncrement = positions.badgeIncrement.flatMap { position in
            record.withUnsafeHeaderBytes(position) { _, value in value.flatMap { try? Self.badgeIncrement($0) } }
        }
        return ValidatedRequest(
            pushType: pushType, pushTypeWasGiven: positions.pushType != nil, priority: priority, apnsID: apnsID,
            apnsIDWasGiven: positions.apnsID != nil, expiration: expiration, expirationIsZero: false, appStateOverride: appState,
            topic: topic, topicHeader: topicHeader, collapseIDHeader: collapseID, traceparentHeader: positions.traceparent,
            badgeIncrement: badgeIncrement, payload: ValidatedRequest.PayloadCheck(traits: traits, form: .compact))
    }
}
