import JSON
import Notifications
import Records

extension DispatchResult {
    /// The output records of `decision` (SEMANTICS sections 5 and 10) for the topics in `topics`.
    ///
    /// A dead letter is cut to fit `limit` (``DeadLetter/outputRecord(topic:limit:extent:)``); a
    /// delivery or action record and its launch are written whole (``Dispatcher`` decides what
    /// one that would not fit becomes before it gets here).
    package static func outputRecords(for decision: Decision, topics: TopicSettings, limit: OutputLimit) -> [OutputRecord] {
        switch decision {
        case .delivered(let delivery):
            let request = delivery.request
            var records = recordAndLaunch(
                .delivery, topic: topics.deliveries, value: DeliveryJSON.deliveryBytes(delivery), launch: delivery.launch,
                apnsID: request.apnsID.utf8, deviceToken: request.deviceToken, bundleID: request.bundleID,
                payload: delivery.content.payload, traceparent: request.traceparentBytes, topics: topics)
            guard delivery.activityChange != nil || delivery.storedKey != nil || delivery.ledger?.changes == true else { return records }
            // Section 21.3, 14.6, then 16.3: the badges record, the activities record, then the stored tombstone.
            let headers = records[0].headers
            if let ledger = delivery.ledger, ledger.changes {
                records.append(
                    OutputRecord(
                        kind: .badge, topic: topics.badges, key: Array(ledger.key.utf8), headers: headers,
                        value: BadgesTable.value(count: ledger.after, updatedAt: Timestamp.milliseconds(delivery.deliveredAt))))
            }
            if let change = delivery.activityChange {
                records.append(
                    OutputRecord(
                        kind: .activity, topic: topics.activities, key: Array(change.activityToken.utf8), headers: headers,
                        value: change.entry.bytes))
                if let evicted = change.evicted {
                    records.append(OutputRecord(kind: .activity, topic: topics.activities, key: Array(evicted.utf8), headers: headers, value: nil))
                }
            }
            if let key = delivery.storedKey {
                records.append(OutputRecord(kind: .stored, topic: topics.stored, key: Array(key.utf8), headers: headers, value: nil))
            }
            return records
        case .stored(let stored, let replaced):
            var records: [OutputRecord] = []
            if let replaced {
                records = outputRecords(for: .delivered(replaced), topics: topics, limit: limit)
            }
            records.append(
                OutputRecord(
                    kind: .stored, topic: topics.stored, key: Array(stored.key.utf8),
                    headers: messageHeaders(apnsID: stored.apnsID.utf8, traceparent: stored.traceparentBytes),
                    value: stored.bytes))
            return records
        case .several(let parts):
            return parts.flatMap(\.outputs)
        case .handled(let handled):
            let response = handled.response
            return recordAndLaunch(
                .action, topic: topics.actions, value: JSONValue.object(ActionJSON.action(handled)).serialized(), launch: handled.handling.launch,
                apnsID: Array(response.notificationID.utf8), deviceToken: response.deviceToken, bundleID: response.bundleID,
                payload: response.payload, traceparent: response.traceparent.map(RecordBytes.init), topics: topics)
        case .deadLettered(let deadLetter):
            let record = deadLetter.outputRecord(topic: topics.deadLetter, limit: limit)
            // Token feedback is about requests: a user's response (section 10) reports none.
            guard deadLetter.record.source.topic != topics.responses,
                let feedback = deadLetter.feedbackRecord(topic: topics.feedback, limit: limit)
            else { return [record] }
            return [record, feedback]
        }
    }

    /// The headers of every output of a request (section 5): `apns-id`, and `traceparent` when it had one.
    static func messageHeaders(apnsID: [UInt8], traceparent: RecordBytes?) -> [RecordHeader] {
        var headers: [RecordHeader] = []
        headers.reserveCapacity(traceparent == nil ? 1 : 2)
        headers.append(RecordHeader(name: "apns-id", value: apnsID))
        if let traceparent {
            headers.append(RecordHeader(name: "traceparent", value: traceparent))
        }
        return headers
    }

    /// A delivery or action record, then its launch record when there is one: keyed by the
    /// normalised device token, with `apns-id` (the notification's) and `traceparent`.
    private static func recordAndLaunch(
        _ kind: OutputRecord.Kind, topic: String, value: [UInt8], launch: LaunchTrigger?,
        apnsID: [UInt8], deviceToken: String, bundleID: String, payload: Payload, traceparent: RecordBytes?,
        topics: TopicSettings
    ) -> [OutputRecord] {
        let headers = messageHeaders(apnsID: apnsID, traceparent: traceparent)
        let key = Array(deviceToken.utf8)
        var records = [
            OutputRecord(kind: kind, topic: topic, key: key, headers: headers, value: value)
        ]
        if let launch {
            let launchValue = DeliveryJSON.launchBytes(
                apnsID: String(decoding: apnsID, as: UTF8.self), deviceToken: deviceToken, bundleID: bundleID, trigger: launch,
                payload: payload)
            records.append(OutputRecord(kind: .launch, topic: topics.launches, key: key, headers: headers, value: launchValue))
        }
        return records
    }
}
