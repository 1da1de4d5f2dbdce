package import Foundation
package import Notifications
package import Records

extension DeadLetter {
    /// How much of the request a dead letter's record keeps.
    package enum Extent: Sendable, Hashable {
        /// The whole request when it fits the limit; else cut as ``minimal`` would be only as far
        /// as needed: first the value's tail, then the request's own headers and the key's tail.
        case fitted
        /// No value, none of the request's own headers but `apns-id`, and at most
        /// ``DeadLetter/minimalKeyBytes`` of key: for brokers whose limit is below the configured one.
        case minimal
    }

    /// The most key bytes a cut dead letter keeps (a valid device token has at most 200).
    package static let minimalKeyBytes = 256

    /// The header that says how many bytes of the request a cut dead letter left out.
    package static let truncatedBytesHeader = "dlq-truncated-bytes"

    /// This dead letter's record (SEMANTICS section 5): the request's key, value and headers with
    /// the `dlq-*` headers, cut to fit `limit` when it would not (``write(_:_:at:consumerGroup:addedMessageID:extent:limit:into:)``
    /// on a view of the record: the writer of every dead letter).
    package func outputRecord(topic: String, limit: OutputLimit, extent: Extent = .fitted) -> OutputRecord {
        var output = OutputBuffer()
        return record.withView { view in
            _ = Self.write(
                view, rejection, at: failedAt, consumerGroup: consumerGroup, addedMessageID: addedMessageID, extent: extent, limit: limit,
                into: &output)
            return output.outputRecord(of: view, topic: topic)
        }
    }

    /// The `dlq-*` headers a dead letter adds, in order: its reason, status (and a 410's
    /// timestamp), detail, where the record came from, the group and when. Both paths add these.
    package static func dlqHeaders(
        rejection: Rejection, source: TopicPartitionOffset, consumerGroup: String, failedAt: Date
    ) -> [(name: StaticString, value: String)] {
        var added: [(name: StaticString, value: String)] = [
            ("dlq-reason", rejection.reason.rawValue),
            ("dlq-status", String(rejection.status)),
        ]
        // A 410 carries when the token stopped being valid (section 12.1).
        if let timestamp = rejection.timestamp { added.append(("dlq-timestamp", String(timestamp))) }
        added += [
            ("dlq-detail", rejection.detail),
            ("dlq-source-topic", source.topic),
            ("dlq-source-partition", String(source.partition)),
            ("dlq-source-offset", String(source.offset)),
            ("dlq-consumer-group", consumerGroup),
            ("dlq-failed-at", Timestamp.rfc3339(failedAt)),
        ]
        return added
    }

    /// Whether a header name is `apns-id` without regard to case: a dead letter keeps the
    /// record's own (the first, whatever its value) and adds one only when it has none.
    package static func isMessageIDName(_ name: UnsafeRawBufferPointer) -> Bool {
        // ASCII (every name in practice): compared byte by byte, without a string.
        if name.allSatisfy({ $0 < 0x80 }) {
            return name.count == 7 && zip(name, "apns-id".utf8).allSatisfy { byte, expected in
                (byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte) == expected
            }
        }
        return String(decoding: name, as: UTF8.self).lowercased() == "apns-id"
    }
}
