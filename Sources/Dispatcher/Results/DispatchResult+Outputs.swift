import Foundation
import Notifications

extension DispatchResult {
    /// The output records of `decision` (SEMANTICS section 5) for the topics in `topics`.
    public static func outputRecords(for decision: Decision, topics: TopicSettings) -> [OutputRecord] {
        switch decision {
        case .delivered(let delivery):
            return deliveryRecords(delivery, topics: topics)
        case .deadLettered(let deadLetter):
            return [deadLetterRecord(deadLetter, topic: topics.deadLetter)]
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

    private static func deadLetterRecord(_ deadLetter: DeadLetter, topic: String) -> OutputRecord {
        let record = deadLetter.record
        var headers = record.headers
        let hasMessageID = headers.contains { $0.name.lowercased() == "apns-id" }
        if !hasMessageID {
            headers.append(RecordHeader(name: "apns-id", value: Array(MessageID.derived(for: record.source).utf8)))
        }
        let added: [(String, String)] = [
            ("dlq-reason", deadLetter.rejection.reason.rawValue),
            ("dlq-status", String(deadLetter.rejection.status)),
            ("dlq-detail", deadLetter.rejection.detail),
            ("dlq-source-topic", record.source.topic),
            ("dlq-source-partition", String(record.source.partition)),
            ("dlq-source-offset", String(record.source.offset)),
            ("dlq-consumer-group", deadLetter.consumerGroup),
            ("dlq-failed-at", Timestamp.rfc3339(deadLetter.failedAt)),
        ]
        headers += added.map { RecordHeader(name: $0.0, value: Array($0.1.utf8)) }
        return OutputRecord(kind: .deadLetter, topic: topic, key: record.key, headers: headers, value: record.value)
    }
}
