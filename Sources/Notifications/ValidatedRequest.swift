package import Foundation
package import JSON
import Records

/// A device request that passed validation (SEMANTICS sections 1 and 2), described without a copy
/// of its bytes: what the rules read of it, and where its parts are in the record it came from
/// (header positions; the key and the value are the record's own).
///
/// The worker decides a request that needs no extension from this and the record lent in place;
/// an owned record turns it into a ``NotificationRequest`` (``request(of:topics:receivedAt:)``),
/// which copies what it keeps. One validation, so both ways read the same facts.
package struct ValidatedRequest: Sendable {
    /// The topic, as validated.
    package enum Topic: Sendable {
        /// A configured app's topic: its entry in the validator's ``KnownTopics``.
        case known(KnownTopics.Index)
        /// Any other topic (allowed when `apps` is empty, or an `mdm` topic): the `apns-topic`
        /// header's bytes, whose first `bundleIDLength` are the bundle ID.
        case given(bundleIDLength: Int)
    }

    /// What check 4 made of the payload.
    package struct PayloadCheck: Sendable {
        /// What the rules read of `aps`.
        package var traits: Payload.Traits
        /// How the value's bytes stand to what `JSONWriter` writes for it (``JSONForm``): copied
        /// as they are when compact, else compacted from the text, wherever the payload goes.
        package var form: JSONForm
    }

    /// The push type, given or inferred.
    package var pushType: PushType
    /// Whether `apns-push-type` was given.
    package var pushTypeWasGiven: Bool
    /// The priority, given or defaulted.
    package var priority: Priority
    /// The `apns-id`, given or derived from the record's position.
    package var apnsID: MessageID
    /// Whether `apns-id` was given.
    package var apnsIDWasGiven: Bool
    /// `apns-expiration` in UNIX seconds; nil when absent or 0.
    package var expiration: Int64?
    /// Whether `apns-expiration` was `0`.
    package var expirationIsZero: Bool
    /// The `app-state` override, if any.
    package var appStateOverride: AppState?
    /// The topic and its bundle ID.
    package var topic: Topic
    /// The position of the `apns-topic` header.
    package var topicHeader: Int
    /// The position of a non-empty `apns-collapse-id` header (valid UTF-8, at most 64 bytes).
    package var collapseIDHeader: Int?
    /// The position of the `traceparent` header.
    package var traceparentHeader: Int?
    /// The `badge-increment` header's number (section 21.1), nil when it has none.
    package var badgeIncrement: Int? = nil
    /// The payload.
    package var payload: PayloadCheck

    /// The request an owned record makes: its strings made, its payload a view of the record's value.
    package func request(of record: RequestRecord, topics: KnownTopics, receivedAt: Date) -> NotificationRequest {
        let topicName: String
        let bundleID: String
        switch topic {
        case .known(let index):
            topicName = topics[index].topic
            bundleID = topics[index].bundleID
        case .given(let bundleIDLength):
            let bytes = record.headers[topicHeader].value ?? []
            topicName = String(decoding: bytes, as: UTF8.self)
            bundleID = String(decoding: bytes.leading(bundleIDLength), as: UTF8.self)
        }
        var request = NotificationRequest(
            deviceToken: DeviceToken.lowercased(record.key ?? []),
            topic: topicName,
            bundleID: bundleID,
            pushType: pushType,
            pushTypeWasGiven: pushTypeWasGiven,
            priority: priority,
            apnsID: apnsID,
            apnsIDWasGiven: apnsIDWasGiven,
            expiration: expiration,
            collapseID: collapseIDHeader.flatMap { record.headers[$0].value }.map { String(decoding: $0, as: UTF8.self) },
            appStateOverride: appStateOverride,
            traceparent: traceparentHeader.flatMap { record.headers[$0].value },
            headers: record.headers,
            payload: Payload(validatedBytes: record.value ?? [], form: payload.form, traits: payload.traits),
            source: record.source,
            receivedAt: receivedAt
        )
        request.expirationIsZero = expirationIsZero
        return request
    }
}
