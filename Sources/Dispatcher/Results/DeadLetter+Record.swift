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
    /// the `dlq-*` headers, cut to fit `limit` when it would not.
    ///
    /// A dead letter must always be writable, or its request could never be committed: one that
    /// would not fit keeps the first bytes of the value (then, if even that is too much, drops the
    /// request's own headers and cuts the key) and says how many bytes it left out in
    /// `dlq-truncated-bytes`.
    package func outputRecord(topic: String, limit: OutputLimit, extent: Extent = .fitted) -> OutputRecord {
        let given = record.headers.first { header in
            var name = header.name
            return name.withUTF8 { Self.isMessageIDName(UnsafeRawBufferPointer($0)) }
        }
        let messageID = given ?? RecordHeader(name: "apns-id", value: addedMessageID.map { Array($0.utf8) } ?? MessageID.derived(for: record.source).utf8)
        let added = dlqHeaders
        let whole = OutputRecord(
            kind: .deadLetter, topic: topic, key: record.key,
            headers: record.headers + (given == nil ? [messageID] : []) + added, value: record.value)
        if extent == .fitted, limit.fits(whole) { return whole }

        let headerBytes = record.headers.reduce(0) { $0 + Self.bytes(of: $1) }
        let originalSize: Int = (record.key?.count ?? 0) + (record.value?.count ?? 0) + headerBytes
        // Room left for the value once everything else (and the header saying what was cut) is in.
        let truncatedHeaderRoom = OutputLimit.headerOverhead + Self.truncatedBytesHeader.utf8.count + 20
        var cut = whole
        cut.value = []
        if extent == .fitted {
            let room = limit.maxRecordBytes - OutputLimit.size(of: cut) - truncatedHeaderRoom
            if room >= 0 {
                let kept = (record.value ?? []).leading(room)
                return Self.marked(cut, value: kept, leftOut: (record.value?.count ?? 0) - kept.count)
            }
        }
        // Even an empty value does not fit (or the brokers refused the cut record): keep only
        // what identifies the request.
        let keepsMessageID = (messageID.value?.count ?? 0) <= 64
        cut.headers = (keepsMessageID ? [messageID] : []) + added
        cut.key = record.key.map { $0.leading(Self.minimalKeyBytes) }
        let keptHeader = keepsMessageID && given != nil ? Self.bytes(of: messageID) : 0
        return Self.marked(cut, value: [], leftOut: originalSize - (cut.key?.count ?? 0) - keptHeader)
    }

    /// The `dlq-*` headers of section 5.
    private var dlqHeaders: [RecordHeader] {
        Self.dlqHeaders(rejection: rejection, source: record.source, consumerGroup: consumerGroup, failedAt: failedAt)
            .map { RecordHeader(name: $0.name.description, value: Array($0.value.utf8)) }
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

    /// The bytes of a header's name and value.
    private static func bytes(of header: RecordHeader) -> Int {
        header.name.utf8.count + (header.value?.count ?? 0)
    }

    /// `record` with `value` and the header saying how many bytes were left out.
    private static func marked(_ record: OutputRecord, value: RecordBytes, leftOut: Int) -> OutputRecord {
        var marked = record
        marked.value = value
        marked.headers.append(RecordHeader(name: truncatedBytesHeader, value: Array(String(leftOut).utf8)))
        return marked
    }
}
