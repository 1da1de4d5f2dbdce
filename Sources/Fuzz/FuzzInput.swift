import Notifications
import Records

/// What the fuzzer's bytes stand for: one request record in a framing the fuzzer mutates part by
/// part, or lines of the offline `dispatch` command's JSON-lines format.
///
/// The framing, chosen so that a mutation of a header or of the key is a mutation of a few bytes
/// (a length prefix would turn most of them into a different split), and readable in a corpus:
///
///     <options byte><key>\n
///     <header name>:<header value>\n      (any number; a line without ':' is a header whose value is null)
///     \n
///     <value: every byte that follows>
///
/// The options byte (an ASCII digit in the seeds): bits 0-1 choose the dispatcher
/// (``FuzzDispatchers``), bit 2 makes the key null (Kafka's null key, as opposed to an empty one),
/// bit 3 the value null (a tombstone). Without the blank line, every line after the key is a
/// header and the value is empty. A header name cannot hold `:` or a newline, nor a key or a
/// header value a newline: nothing in the rules reads those bytes specially.
///
/// An input whose first byte is `{` is JSON lines instead (``lines``): the samples of
/// `Config/samples` as they are, state-table records and responses included.
enum FuzzInput {
    /// One framed request record and the dispatcher that decides it.
    case record(RequestRecord, dispatcher: Int)
    /// JSON lines, split on newlines (blank lines kept: they count for offsets).
    case lines([[UInt8]])

    /// The topic, partition and offset of a framed record: the sample configuration's requests
    /// topic, so that the derived `apns-id` is the one `dispatch` would derive for a first line.
    static let source = TopicPartitionOffset(topic: "notifications.requests", partition: 0, offset: 0)

    /// The most JSON lines an input is read as: enough for a table update, a request and a
    /// response, few enough that one input stays fast.
    static let maximumLines = 16

    /// Decodes `bytes` (nil for an empty input, which stands for nothing).
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> FuzzInput? {
        guard let options = bytes.first else { return nil }
        if options == UInt8(ascii: "{") {
            let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(maximumLines)
            return .lines(lines.map { Array($0) })
        }
        var lines = bytes.dropFirst().split(separator: UInt8(ascii: "\n"), maxSplits: .max, omittingEmptySubsequences: false)[...]
        let key = lines.popFirst().map { Array($0) } ?? []
        var headers: [RecordHeader] = []
        var value: [UInt8] = []
        while let line = lines.popFirst() {
            if line.isEmpty {
                // The blank line: its newline is at its start index; the value is what follows.
                if line.startIndex < bytes.count { value = Array(bytes[(line.startIndex + 1)...]) }
                break
            }
            if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
                headers.append(RecordHeader(name: String(decoding: line[..<colon], as: UTF8.self), value: Array(line[(colon + 1)...])))
            } else {
                headers.append(RecordHeader(name: String(decoding: line, as: UTF8.self), value: nil as [UInt8]?))
            }
        }
        let record = RequestRecord(
            key: options & 0b0100 == 0 ? key : nil, headers: headers, value: options & 0b1000 == 0 ? value : nil, source: source)
        return .record(record, dispatcher: Int(options & 0b11))
    }

    /// The framing of `record` with `options` (the seeds' writer: the inverse of ``decode(_:)``
    /// for records the framing can hold).
    static func encode(_ record: RequestRecord, options: UInt8 = UInt8(ascii: "0")) -> [UInt8] {
        var bytes: [UInt8] = [options | (record.key == nil ? 0b0100 : 0) | (record.value == nil ? 0b1000 : 0)]
        bytes += record.key.map { Array($0) } ?? []
        bytes.append(UInt8(ascii: "\n"))
        for header in record.headers {
            bytes += Array(header.name.utf8)
            if let value = header.value {
                bytes.append(UInt8(ascii: ":"))
                bytes += Array(value)
            }
            bytes.append(UInt8(ascii: "\n"))
        }
        bytes.append(UInt8(ascii: "\n"))
        bytes += record.value.map { Array($0) } ?? []
        return bytes
    }
}
