import Notifications

extension DispatchResult {
    /// The output records of `decision` (SEMANTICS section 5) for the topics in `topics`.
    ///
    /// A dead letter is cut to fit `limit` (``DeadLetter/outputRecord(topic:limit:extent:)``); a
    /// delivery and its launch are written whole (``Dispatcher`` decides what a delivery that
    /// would not fit becomes before it gets here).
    public static func outputRecords(for decision: Decision, topics: TopicSettings, limit: OutputLimit) -> [OutputRecord] {
        switch decision {
        case .delivered(let delivery):
            return deliveryRecords(delivery, topics: topics)
        case .deadLettered(let deadLetter):
            return [deadLetter.outputRecord(topic: topics.deadLetter, limit: limit)]
        }
    }

    private static func deliveryRecords(_ delivery: Delivery, topics: TopicSettings) -> [OutputRecord] {
        let request = delivery.request
        var headers = [RecordHeader(name: "apns-id", value: Array(request.apnsID.utf8))]
        if let traceparent = request.traceparent {
            headers.append(RecordHeader(name: "traceparent", value: Array(traceparent.utf8)))
        }
        let key = Array(request.deviceToken.utf8)
        var records = [
            OutputRecord(
                kind: .delivery, topic: topics.deliveries, key: key, headers: headers,
                value: JSONValue.object(DeliveryJSON.delivery(delivery)).serialized())
        ]
        if let launch = delivery.launch {
            records.append(
                OutputRecord(
                    kind: .launch, topic: topics.launches, key: key, headers: headers,
                    value: JSONValue.object(DeliveryJSON.launch(delivery, trigger: launch)).serialized()))
        }
        return records
    }
}
