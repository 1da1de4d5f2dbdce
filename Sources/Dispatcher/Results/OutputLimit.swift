import Notifications
package import Records

/// The largest output record the brokers take (`kafka.maxMessageBytes`, which the producer also
/// gets as librdkafka's `message.max.bytes`), and how a record is measured against it.
///
/// Every output is measured before it is produced, so a record that cannot fit is decided here,
/// by the rules, rather than refused by librdkafka and retried (docs/worker.md, "Failures").
package struct OutputLimit: Sendable, Hashable {
    /// The most bytes one record may take, framing included.
    package var maxRecordBytes: Int

    /// librdkafka's default `message.max.bytes`.
    package static let `default` = OutputLimit(maxRecordBytes: 1_000_000)

    /// A limit of `maxRecordBytes`.
    package init(maxRecordBytes: Int) {
        self.maxRecordBytes = maxRecordBytes
    }

    /// The framing counted for each header besides its name and value (two length varints and
    /// room to spare).
    static let headerOverhead = 10
    /// The framing counted for a record besides its key, value and headers. librdkafka adds at most
    /// about 40 bytes of record framing to what it compares with `message.max.bytes`; this is more.
    static let recordOverhead = 64

    /// The bytes a record of these parts takes against the limit.
    package static func size(key: RecordBytes?, headers: [RecordHeader], value: RecordBytes?) -> Int {
        var headerBytes = 0
        for header in headers { headerBytes += header.name.utf8.count + (header.value?.count ?? 0) }
        return size(keyBytes: key?.count ?? 0, valueBytes: value?.count ?? 0, headerBytes: headerBytes, headers: headers.count)
    }

    /// The size of a record of `keyBytes`, `valueBytes` and `headers` headers whose names and
    /// values take `headerBytes`: the same measure, for a record written in place.
    package static func size(keyBytes: Int, valueBytes: Int, headerBytes: Int, headers: Int) -> Int {
        recordOverhead + keyBytes + valueBytes + headerBytes + headers * headerOverhead
    }

    /// The bytes `record` takes against the limit.
    package static func size(of record: OutputRecord) -> Int {
        size(key: record.key, headers: record.headers, value: record.value)
    }

    /// Whether `record` fits.
    package func fits(_ record: OutputRecord) -> Bool {
        Self.size(of: record) <= maxRecordBytes
    }
}
