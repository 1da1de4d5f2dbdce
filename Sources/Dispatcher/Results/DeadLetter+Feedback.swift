import Foundation
import JSON
import Notifications
import Records

extension DeadLetter {
    /// The feedback record that follows this dead letter (SEMANTICS section 12.2), nil unless its
    /// reason is one of the token reasons (`BadDeviceToken`, `DeviceTokenNotForTopic`,
    /// `Unregistered`, `ExpiredToken`).
    ///
    /// Keyed by the request's key (lowercased when hexadecimal), with the dead letter's `apns-id`
    /// and the request's `traceparent`. A key too long for `limit` (a `BadDeviceToken` key can be
    /// any bytes) is cut to ``DeadLetter/minimalKeyBytes``, as a dead letter's minimal form cuts it.
    func feedbackRecord(topic: String, limit: OutputLimit) -> OutputRecord? {
        guard rejection.reason.reportsTokenFeedback else { return nil }
        let apnsID = header("apns-id", first: true).map { String(decoding: $0, as: UTF8.self) } ?? MessageID.derived(for: record.source).description
        var headers = [RecordHeader(name: "apns-id", value: Array(apnsID.utf8))]
        if let traceparent = header("traceparent", first: false) {
            headers.append(RecordHeader(name: "traceparent", value: traceparent))
        }
        var key = Self.feedbackKey(record.key ?? [])
        var feedback = OutputRecord(kind: .feedback, topic: topic, key: key, headers: headers, value: RecordBytes(feedbackValue(apnsID: apnsID, key: key)))
        if !limit.fits(feedback) {
            key = key.leading(Self.minimalKeyBytes)
            feedback.key = key
            feedback.value = RecordBytes(feedbackValue(apnsID: apnsID, key: key))
        }
        return feedback
    }

    /// The feedback record's value: `apnsId`, `deviceToken`, `bundleId`, `status`, `reason`,
    /// `timestamp` and `reportedAt`, in that order.
    private func feedbackValue(apnsID: String, key: RecordBytes) -> [UInt8] {
        let value = JSONObject([
            ("apnsId", .string(apnsID)),
            ("deviceToken", .string(String(decoding: key, as: UTF8.self))),
            ("bundleId", .string(orNull: bundleID)),
            ("status", .number(JSONNumber(rejection.status))),
            ("reason", .string(rejection.reason.rawValue)),
            ("timestamp", rejection.timestamp.map { .number(JSONNumber(Int($0))) } ?? .null),
            ("reportedAt", .string(Timestamp.rfc3339(failedAt))),
        ])
        return JSONValue.object(value).serialized()
    }

    /// The request's bundle ID as far as its headers say: the `apns-topic` less a known push-type
    /// suffix, the whole topic for `mdm`, nil when the topic is missing or empty.
    private var bundleID: String? {
        guard let topicBytes = header("apns-topic", first: false), !topicBytes.isEmpty else { return nil }
        let topic = String(decoding: topicBytes, as: UTF8.self)
        if let pushType = header("apns-push-type", first: false), pushType.elementsEqual("mdm".utf8) { return topic }
        for pushType in PushType.allCases {
            guard let suffix = pushType.topicSuffix, topic.utf8.count > suffix.utf8.count, topic.hasSuffix(suffix) else { continue }
            return String(topic.dropLast(suffix.count))
        }
        return topic
    }

    /// The value of the request's header `name` (without regard to case): the first or the last.
    private func header(_ name: String, first: Bool) -> RecordBytes? {
        let matches = { (header: RecordHeader) in header.value != nil && header.name.lowercased() == name }
        return (first ? record.headers.first(where: matches) : record.headers.last(where: matches))?.value
    }

    /// The key lowercased when it is all hexadecimal digits, else as given.
    private static func feedbackKey(_ key: RecordBytes) -> RecordBytes {
        var lowered = key.array
        for index in lowered.indices {
            switch lowered[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): continue
            case UInt8(ascii: "A")...UInt8(ascii: "F"): lowered[index] += 32
            default: return key
            }
        }
        return RecordBytes(lowered)
    }
}
