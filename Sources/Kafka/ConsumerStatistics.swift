import JSON
public import Records

/// The parts of librdkafka's statistics JSON a consumer cares about, plus the JSON itself.
public struct ConsumerStatistics: Sendable {
    /// Messages not yet read, per assigned partition: end offset minus the consumer's position
    /// (minus the committed offset before anything was read). Partitions with neither are left out.
    public var consumerLag: [TopicPartition: Int64]
    /// Messages not yet committed, per assigned partition with a committed offset (librdkafka's `consumer_lag`).
    public var committedLag: [TopicPartition: Int64]
    /// The statistics JSON as librdkafka emitted it.
    public var raw: String

    /// Creates statistics from their parts.
    package init(consumerLag: [TopicPartition: Int64], committedLag: [TopicPartition: Int64] = [:], raw: String) {
        self.consumerLag = consumerLag
        self.committedLag = committedLag
        self.raw = raw
    }

    /// Parses librdkafka's statistics JSON; unknown values and unassigned partitions are left out.
    ///
    /// The end offset is the last stable offset when known (`isolation.level=read_committed`, the
    /// default), else the high watermark. Malformed JSON gives empty lags (with `raw` kept):
    /// statistics never fail the consumer.
    ///
    /// Read with the JSON module's scanner, which builds nothing: only `topics` is walked, and of each
    /// partition only the seven numbers below. The document is large (about 1 KB per partition of
    /// every subscribed topic, emitted once a second); decoding all of it with `JSONDecoder` cost 1.7 %
    /// of `serve`'s CPU on the gate-only bench.
    package init(json: String) {
        var json = json
        let partitions = json.withUTF8 { StatisticsReader.partitions(in: $0) }
        var lag: [TopicPartition: Int64] = [:]
        var committedLag: [TopicPartition: Int64] = [:]
        for (key, partition) in partitions where partition.partition >= 0 && partition.desired != false {
            if let committed = partition.consumerLag, committed >= 0 { committedLag[key] = committed }
            guard let end = [partition.lastStableOffset, partition.highWatermark].compactMap({ $0 }).first(where: { $0 >= 0 }),
                let position = [partition.applicationOffset, partition.committedOffset].compactMap({ $0 }).first(where: { $0 >= 0 })
            else { continue }
            lag[key] = max(0, end - position)
        }
        self.init(consumerLag: lag, committedLag: committedLag, raw: json)
    }
}

/// One partition of the statistics JSON (`-1` is librdkafka's internal unassigned partition).
private struct PartitionStatistics {
    var partition: Int32 = -1
    var desired: Bool?
    var consumerLag: Int64?
    var applicationOffset: Int64?
    var committedOffset: Int64?
    var highWatermark: Int64?
    var lastStableOffset: Int64?
}

/// Walks `topics.<name>.partitions.<n>` of the statistics JSON and reads each partition's numbers.
private enum StatisticsReader {
    /// The partitions of every topic, in document order; none when the JSON is malformed.
    static func partitions(in bytes: UnsafeBufferPointer<UInt8>) -> [(TopicPartition, PartitionStatistics)] {
        var found: [(TopicPartition, PartitionStatistics)] = []
        do throws(JSONScanner.Unusual) {
            // librdkafka writes one member per partition (and per broker), far beyond the scanner's
            // key limit for payloads, and never repeats a key.
            try JSONScanner.withScanner(over: bytes, maxDepth: 16, checksKeys: false) { scanner throws(JSONScanner.Unusual) in
                var document = try scanner.openObject()
                while let key = try scanner.nextKey(&document) {
                    guard scanner.slice(key).elementsEqual("topics".utf8) else {
                        try scanner.skipValue()
                        continue
                    }
                    try readTopics(&scanner, into: &found)
                }
                try scanner.finish()
            }
        } catch {
            return []
        }
        return found
    }

    /// Reads the `topics` object at the cursor.
    private static func readTopics(_ scanner: inout JSONScanner, into found: inout [(TopicPartition, PartitionStatistics)])
        throws(JSONScanner.Unusual)
    {
        guard scanner.peek() == UInt8(ascii: "{") else { return try scanner.skipValue() }
        var topics = try scanner.openObject()
        while let name = try scanner.nextKey(&topics) {
            let topic = String(decoding: scanner.slice(name), as: UTF8.self)
            guard scanner.peek() == UInt8(ascii: "{") else {
                try scanner.skipValue()
                continue
            }
            var members = try scanner.openObject()
            while let key = try scanner.nextKey(&members) {
                guard scanner.slice(key).elementsEqual("partitions".utf8), scanner.peek() == UInt8(ascii: "{") else {
                    try scanner.skipValue()
                    continue
                }
                var partitions = try scanner.openObject()
                while try scanner.nextKey(&partitions) != nil {
                    guard let partition = try readPartition(&scanner) else { continue }
                    found.append((TopicPartition(topic: topic, partition: partition.partition), partition))
                }
            }
        }
    }

    /// Reads one partition's object at the cursor; nil (and skipped) when it is not an object or
    /// has no `partition` number.
    private static func readPartition(_ scanner: inout JSONScanner) throws(JSONScanner.Unusual) -> PartitionStatistics? {
        guard scanner.peek() == UInt8(ascii: "{") else {
            try scanner.skipValue()
            return nil
        }
        var statistics = PartitionStatistics()
        var hasNumber = false
        var members = try scanner.openObject()
        while let key = try scanner.nextKey(&members) {
            let name = scanner.slice(key)
            let first = scanner.peek() ?? 0
            switch first {
            case UInt8(ascii: "t"), UInt8(ascii: "f"):
                try scanner.skipValue()
                let isTrue = first == UInt8(ascii: "t")
                if name.elementsEqual("desired".utf8) { statistics.desired = isTrue }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let number = try scanner.readNumber()
                guard number.isInteger, let value = integer(scanner.slice(number.range)) else { continue }
                if name.elementsEqual("partition".utf8) {
                    guard let partition = Int32(exactly: value) else { continue }
                    statistics.partition = partition
                    hasNumber = true
                } else if name.elementsEqual("consumer_lag".utf8) {
                    statistics.consumerLag = value
                } else if name.elementsEqual("app_offset".utf8) {
                    statistics.applicationOffset = value
                } else if name.elementsEqual("committed_offset".utf8) {
                    statistics.committedOffset = value
                } else if name.elementsEqual("hi_offset".utf8) {
                    statistics.highWatermark = value
                } else if name.elementsEqual("ls_offset".utf8) {
                    statistics.lastStableOffset = value
                }
            default:
                try scanner.skipValue()
            }
        }
        return hasNumber ? statistics : nil
    }

    /// The value of an integer's JSON text; nil when it does not fit 64 bits.
    private static func integer(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var digits = text[...]
        let isNegative = digits.first == UInt8(ascii: "-")
        if isNegative { digits = digits.dropFirst() }
        var magnitude: Int64 = 0
        for digit in digits {
            let (shifted, overflowed) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, added) = shifted.addingReportingOverflow(Int64(digit &- UInt8(ascii: "0")))
            guard !overflowed, !added else { return nil }
            magnitude = sum
        }
        return isNegative ? -magnitude : magnitude
    }
}
