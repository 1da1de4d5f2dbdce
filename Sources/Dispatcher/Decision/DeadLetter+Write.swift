package import Foundation
import JSON
package import Notifications
package import Records

extension DeadLetter {
    /// Writes the dead letter of a record lent in place (section 5: the record's key, value and
    /// headers, its `apns-id` when it has none, and the `dlq-*` headers), cut to fit `limit` when
    /// it would not: the one writer of dead letters, for requests, broadcasts and responses.
    ///
    /// A dead letter must always be writable, or its request could never be committed: one that
    /// would not fit keeps the first bytes of the value (then, if even that is too much, drops the
    /// request's own headers and cuts the key) and says how many bytes it left out in
    /// `dlq-truncated-bytes`.
    /// - Parameter addedMessageID: the `apns-id` added when the record has none; nil derives it
    ///   from the record's position (section 1). A broadcast's is its `apns-request-id` (section 15).
    /// - Returns: its size against the output limit.
    package static func write(
        _ record: borrowing RecordView, _ rejection: Rejection, at failedAt: Date, consumerGroup: String, addedMessageID: String?,
        extent: Extent, limit: OutputLimit, into output: inout OutputBuffer
    ) -> Int {
        output.begin(.deadLetter, to: .deadLetter)
        // The record's own apns-id (the first, whatever its value), else one added.
        var givenMessageID: Int?
        for index in 0..<record.headerCount where givenMessageID == nil {
            if record.withUnsafeHeaderBytes(index, { name, _ in isMessageIDName(name) }) { givenMessageID = index }
        }
        var addedMessageIDValue: Range<Int>?
        if givenMessageID == nil {
            if let addedMessageID {
                addedMessageIDValue = output.append(addedMessageID)
            } else {
                let derived = record.withUnsafeTopicBytes { MessageID.derived(topicBytes: $0, partition: record.partition, offset: record.offset) }
                addedMessageIDValue = output.append(derived)
            }
        }
        var added: [OutputBuffer.HeaderSource] = []
        for header in dlqHeaders(rejection: rejection, source: record.position, consumerGroup: consumerGroup, failedAt: failedAt) {
            added.append(.written(name: header.name, value: output.append(header.value)))
        }
        func layOutWhole() {
            output.headers.removeAll(keepingCapacity: true)
            for index in 0..<record.headerCount { output.headers.append(.record(header: index)) }
            if let addedMessageIDValue { output.headers.append(.written(name: "apns-id", value: addedMessageIDValue)) }
            output.headers += added
        }
        layOutWhole()
        output.key = .record
        output.value = .record
        let whole = output.size(of: record)
        if extent == .fitted, whole <= limit.maxRecordBytes { return whole }

        // Cut: first the value's tail; when even an empty value does not fit (or the brokers
        // refused the cut record), only what identifies the request.
        let originalSize: Int = record.withUnsafeKeyBytes { key in
            record.withUnsafeValueBytes { value in
                var size = (key?.count ?? 0) + (value?.count ?? 0)
                for index in 0..<record.headerCount {
                    size += record.withUnsafeHeaderBytes(index) { name, value in name.count + (value?.count ?? 0) }
                }
                return size
            }
        }
        let valueCount = record.withUnsafeValueBytes { $0?.count ?? 0 }
        let truncatedHeaderRoom = OutputLimit.headerOverhead + truncatedBytesHeader.utf8.count + 20
        if extent == .fitted {
            output.value = .written(output.writer.count..<output.writer.count)
            let room = limit.maxRecordBytes - output.size(of: record) - truncatedHeaderRoom
            if room >= 0 {
                let kept = min(room, valueCount)
                let start = output.writer.count
                record.withUnsafeValueBytes { value in
                    if let value { output.writer.append(bytes: UnsafeRawBufferPointer(rebasing: value[..<kept])) }
                }
                output.value = .written(start..<output.writer.count)
                output.headers.append(.written(name: "dlq-truncated-bytes", value: output.append(String(valueCount - kept))))
                return output.size(of: record)
            }
        }
        let messageIDBytes: Int =
            if let givenMessageID {
                record.withUnsafeHeaderBytes(givenMessageID) { _, value in value?.count ?? 0 }
            } else {
                addedMessageIDValue?.count ?? 0
            }
        let keepsMessageID = messageIDBytes <= 64
        output.headers.removeAll(keepingCapacity: true)
        if keepsMessageID {
            if let givenMessageID {
                output.headers.append(.record(header: givenMessageID))
            } else if let addedMessageIDValue {
                output.headers.append(.written(name: "apns-id", value: addedMessageIDValue))
            }
        }
        output.headers += added
        output.key = .recordLeading(minimalKeyBytes)
        output.value = .written(output.writer.count..<output.writer.count)
        let keptKey = record.withUnsafeKeyBytes { min($0?.count ?? 0, minimalKeyBytes) }
        let keptHeader =
            keepsMessageID ? (givenMessageID.map { index in record.withUnsafeHeaderBytes(index) { name, value in name.count + (value?.count ?? 0) } } ?? 0) : 0
        output.headers.append(.written(name: "dlq-truncated-bytes", value: output.append(String(originalSize - keptKey - keptHeader))))
        return output.size(of: record)
    }

    /// Writes the feedback record that follows a token's dead letter (section 12.2): keyed by the
    /// request's key (lowercased when hexadecimal), with the dead letter's `apns-id` and the
    /// request's `traceparent`. A key too long for the output limit (a `BadDeviceToken` key can
    /// be any bytes) is cut to ``DeadLetter/minimalKeyBytes``, as a dead letter's minimal form
    /// cuts it.
    package static func writeFeedback(
        _ record: borrowing RecordView, reason: RejectionReason, status: Int, timestamp: Int64?, reportedAt: Date, limit: OutputLimit,
        into output: inout OutputBuffer
    ) {
        // Rare (a token refused): the record's header values are read as strings, as they are.
        let apnsID =
            headerValue(of: record, named: "apns-id", first: true).map { String(decoding: $0, as: UTF8.self) }
            ?? record.withUnsafeTopicBytes { MessageID.derived(topicBytes: $0, partition: record.partition, offset: record.offset) }.description
        let traceparent = headerPosition(of: record, named: "traceparent", first: false)
        let bundleID = feedbackBundleID(of: record)
        let fullKey = record.withUnsafeKeyBytes { feedbackKey($0.map { Array($0) } ?? []) }
        func write(key: [UInt8]) {
            output.begin(.feedback, to: .feedback)
            let value = JSONObject([
                ("apnsId", .string(apnsID)),
                ("deviceToken", .string(String(decoding: key, as: UTF8.self))),
                ("bundleId", .string(orNull: bundleID)),
                ("status", .number(JSONNumber(status))),
                ("reason", .string(reason.rawValue)),
                ("timestamp", timestamp.map { .number(JSONNumber(Int($0))) } ?? .null),
                ("reportedAt", .string(Timestamp.rfc3339(reportedAt))),
            ])
            output.writer.write(object: value)
            output.endValue()
            let keyRange = key.withUnsafeBytes { output.append($0) }
            output.key = .written(keyRange)
            output.headers.append(.written(name: "apns-id", value: output.append(apnsID)))
            if let traceparent { output.headers.append(.recordValue(name: "traceparent", header: traceparent)) }
        }
        write(key: fullKey)
        if output.size(of: record) > limit.maxRecordBytes { write(key: Array(fullKey.prefix(minimalKeyBytes))) }
    }

    /// The key a feedback record has: lowercased when it is all hexadecimal digits, else as given.
    private static func feedbackKey(_ key: [UInt8]) -> [UInt8] {
        var lowered = key
        for index in lowered.indices {
            switch lowered[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): continue
            case UInt8(ascii: "A")...UInt8(ascii: "F"): lowered[index] += 32
            default: return key
            }
        }
        return lowered
    }

    /// The request's bundle ID as far as its headers say: the `apns-topic` less a known
    /// push-type suffix, the whole topic for `mdm`, nil when the topic is missing or empty.
    private static func feedbackBundleID(of record: borrowing RecordView) -> String? {
        guard let topicBytes = headerValue(of: record, named: "apns-topic", first: false), !topicBytes.isEmpty else { return nil }
        let topic = String(decoding: topicBytes, as: UTF8.self)
        if let pushType = headerValue(of: record, named: "apns-push-type", first: false), pushType.elementsEqual("mdm".utf8) { return topic }
        for pushType in PushType.allCases {
            guard let suffix = pushType.topicSuffix, topic.utf8.count > suffix.utf8.count, topic.hasSuffix(suffix) else { continue }
            return String(topic.dropLast(suffix.count))
        }
        return topic
    }

    /// The position of the record's header `name` (without regard to case) that has a value:
    /// the first or the last.
    private static func headerPosition(of record: borrowing RecordView, named name: String, first: Bool) -> Int? {
        var found: Int?
        for index in 0..<record.headerCount {
            let matches = record.withUnsafeHeaderBytes(index) { headerName, value in
                value != nil && String(decoding: headerName, as: UTF8.self).lowercased() == name
            }
            guard matches else { continue }
            found = index
            if first { break }
        }
        return found
    }

    /// The value of the record's header `name` (``headerPosition(of:named:first:)``), copied.
    private static func headerValue(of record: borrowing RecordView, named name: String, first: Bool) -> [UInt8]? {
        guard let position = headerPosition(of: record, named: name, first: first) else { return nil }
        return record.withUnsafeHeaderBytes(position) { _, value in value.map { Array($0) } }
    }

}
