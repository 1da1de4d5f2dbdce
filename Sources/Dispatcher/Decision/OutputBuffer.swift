import JSON
import Notifications
package import Records

/// One output record written for a request (``Dispatcher/decide(_:tables:now:into:)``) into
/// buffers that every record reuses: the worker hands it to the producer, which copies it, and
/// moves on; offline and in the rare paths it is copied into an ``OutputRecord``
/// (``outputRecord(of:topics:)``). Every delivery, launch, dead letter and feedback record of a
/// request decided without waiting is written here, by one writer (docs/worker.md, "One path
/// for a record").
///
/// What the output does not write it lends from the record: a dead letter's key, value and
/// headers are the record's own, read where they lie when the output is produced
/// (``withLent(from:_:)``). No part of it is an object of its own: one value per worker, its
/// buffers grown to the largest record seen (noncopyable, as its writer is).
package struct OutputBuffer: ~Copyable {
    /// The output topics a request decided without waiting writes to.
    package enum Topic: Sendable, Hashable {
        case deliveries, launches, deadLetter, feedback, badges
    }

    /// Where a part of the output lies.
    enum Source {
        /// Written, at this range of ``writer``'s output.
        case written(Range<Int>)
        /// The record's own key or value.
        case record
        /// The first bytes of the record's own key or value (a dead letter cut to fit).
        case recordLeading(Int)
        /// None (Kafka's null).
        case none
    }

    /// Where a header of the output lies.
    enum HeaderSource {
        /// A name given in the code and a value written here.
        case written(name: StaticString, value: Range<Int>)
        /// A name given in the code and the value of the record's header at a position.
        case recordValue(name: StaticString, header: Int)
        /// The record's header at a position, name and value.
        case record(header: Int)
    }

    /// The topic it goes to.
    package private(set) var topic = Topic.deliveries
    /// The partition it goes to; nil lets the producer choose by key (every output but a
    /// changelog record, which goes to the partition of the state it changes).
    package var partition: Int32?
    /// What kind of output it is.
    package private(set) var kind = OutputRecord.Kind.delivery
    /// Everything written: the value first (a JSON writer's output), then key and header values.
    var writer = JSONWriter(capacity: 8_192)
    /// The last timestamp written: every record of a batch is processed at the same time.
    var timestamps = Timestamp.Cache()
    /// The key.
    var key = Source.record
    /// The value.
    var value = Source.record
    /// The headers, in order.
    var headers: [HeaderSource] = []
    /// Where ``withLent(from:_:)`` lays the headers out for the producer, grown as needed. A
    /// buffer of the output's own rather than a temporary allocation per call: inside that
    /// generic method, the allocation made the runtime instantiate a `Result` type's metadata
    /// on every call.
    private var lent: UnsafeMutableBufferPointer<LentHeader> = .allocate(capacity: 32)
    /// Where validation notes a payload's whitespace for the delivery's compaction
    /// (``WhitespaceRuns``): 512 runs, a 4-KB pretty-printed payload's lines several times over.
    private let whitespaceStorage: UnsafeMutableBufferPointer<UInt32> = .allocate(capacity: 1_024)

    /// An empty output, its buffers to be grown by use.
    package init() {
        headers.reserveCapacity(32)
    }

    deinit {
        lent.deallocate()
        whitespaceStorage.deallocate()
    }

    /// Runs for the next record's validation to note its payload's whitespace in, nothing noted
    /// yet; they are the output's storage, good until the next record's.
    var whitespaceRuns: WhitespaceRuns { WhitespaceRuns(storage: whitespaceStorage) }

    /// Starts the next output of `kind` to `topic`: the value is written first.
    mutating func begin(_ kind: OutputRecord.Kind, to topic: Topic) {
        self.kind = kind
        self.topic = topic
        writer.reset()
        key = .record
        value = .record
        partition = nil
        headers.removeAll(keepingCapacity: true)
    }

    /// Marks what was written since ``begin(_:to:)`` as the value.
    mutating func endValue() {
        value = .written(0..<writer.count)
    }

    /// Appends `bytes` after what is written; their range.
    mutating func append(_ bytes: UnsafeRawBufferPointer) -> Range<Int> {
        let start = writer.count
        writer.append(bytes: bytes)
        return start..<writer.count
    }

    /// Appends the text of `id` (its 36 characters); their range.
    mutating func append(_ id: MessageID) -> Range<Int> {
        let start = writer.count
        writer.write(upTo: MessageID.textLength) { room in id.write(into: room.bindMemory(to: UInt8.self)) }
        return start..<writer.count
    }

    /// Appends the bytes of `text`; their range.
    mutating func append(_ text: String) -> Range<Int> {
        var text = text
        return text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// Lends the output to `body`: its key, value and headers where they lie (written here, or
    /// the record's own), for as long as the call lasts.
    package mutating func withLent<Result>(
        from record: borrowing RecordView,
        _ body: (_ key: UnsafeRawBufferPointer?, _ value: UnsafeRawBufferPointer?, _ headers: UnsafeBufferPointer<LentHeader>) -> Result
    ) -> Result {
        if headers.count > lent.count {
            lent.deallocate()
            lent = .allocate(capacity: headers.count)
        }
        let lent = self.lent
        return writer.withUnsafeBytes { written in
            record.withUnsafeKeyBytes { recordKey in
                record.withUnsafeValueBytes { recordValue in
                    record.withUnsafeHeaders { recordHeaders in
                        for index in self.headers.indices {
                            switch self.headers[index] {
                            case .written(let name, let range):
                                lent[index] = LentHeader(name: Self.bytes(of: name), value: UnsafeRawBufferPointer(rebasing: written[range]))
                            case .recordValue(let name, let position):
                                lent[index] = LentHeader(name: Self.bytes(of: name), value: recordHeaders[position].value)
                            case .record(let position):
                                lent[index] = recordHeaders[position]
                            }
                        }
                        return body(
                            Self.part(key, written: written, record: recordKey), Self.part(value, written: written, record: recordValue),
                            UnsafeBufferPointer(rebasing: lent[..<self.headers.count]))
                    }
                }
            }
        }
    }

    /// Where `source` lies: in the written bytes or the record's own part.
    private static func part(
        _ source: Source, written: UnsafeRawBufferPointer, record: UnsafeRawBufferPointer?
    ) -> UnsafeRawBufferPointer? {
        switch source {
        case .written(let range): UnsafeRawBufferPointer(rebasing: written[range])
        case .record: record
        case .recordLeading(let count): record.map { UnsafeRawBufferPointer(rebasing: $0[..<min(count, $0.count)]) }
        case .none: nil
        }
    }

    /// The output as an ``OutputRecord`` of its own (its bytes copied): what the offline
    /// `dispatch`, the rare paths (a record decided again after a refused output) and the tests
    /// read. The bytes are the ones the worker lends the producer.
    package mutating func outputRecord(of record: borrowing RecordView, topics: TopicSettings) -> OutputRecord {
        let name =
            switch topic {
            case .deliveries: topics.deliveries
            case .launches: topics.launches
            case .deadLetter: topics.deadLetter
            case .feedback: topics.feedback
            case .badges: topics.badges
            }
        return outputRecord(of: record, topic: name)
    }

    /// ``outputRecord(of:topics:)`` for the topic named `name`.
    package mutating func outputRecord(of record: borrowing RecordView, topic name: String) -> OutputRecord {
        let kind = kind
        return withLent(from: record) { key, value, headers in
            OutputRecord(
                kind: kind, topic: name, key: key.map { Array($0) },
                headers: headers.map { RecordHeader(name: String(decoding: $0.name, as: UTF8.self), value: $0.value.map { RecordBytes(Array($0)) }) },
                value: value.map { Array($0) })
        }
    }

    /// The bytes of a name given in the code.
    private static func bytes(of name: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
    }

    /// The output's size as ``OutputLimit`` measures an output record: from the lengths of its
    /// parts, without lending them (``withLent(from:_:)`` builds the producer's header list,
    /// which the record's produce builds again).
    func size(of record: borrowing RecordView) -> Int {
        func length(_ source: Source, record: UnsafeRawBufferPointer?) -> Int {
            switch source {
            case .written(let range): range.count
            case .record: record?.count ?? 0
            case .recordLeading(let count): min(count, record?.count ?? 0)
            case .none: 0
            }
        }
        let keyBytes = record.withUnsafeKeyBytes { length(key, record: $0) }
        let valueBytes = record.withUnsafeValueBytes { length(value, record: $0) }
        var headerBytes = 0
        for header in headers {
            switch header {
            case .written(let name, let value):
                headerBytes += name.utf8CodeUnitCount + value.count
            case .recordValue(let name, let position):
                headerBytes += name.utf8CodeUnitCount + record.withUnsafeHeaderBytes(position) { _, value in value?.count ?? 0 }
            case .record(let position):
                headerBytes += record.withUnsafeHeaderBytes(position) { name, value in name.count + (value?.count ?? 0) }
            }
        }
        return OutputLimit.size(keyBytes: keyBytes, valueBytes: valueBytes, headerBytes: headerBytes, headers: headers.count)
    }
}
