import JSON
import Notifications
package import Records

/// The output of a record decided in place (``Dispatcher/decideInPlace(_:tables:now:into:)``),
/// written into buffers that every record reuses: the worker hands it to the producer, which
/// copies it, and moves on (docs/worker.md, "Two paths for a record").
///
/// What the output does not write it lends from the record: a dead letter's key, value and
/// headers are the record's own, read where they lie when the output is produced
/// (``withLent(from:_:)``). No part of it is an object of its own: one value per worker, its
/// buffers grown to the largest record seen (noncopyable, as its writer is).
package struct InPlaceOutput: ~Copyable {
    /// The output topics an in-place record writes to.
    package enum Topic: Sendable, Hashable {
        case deliveries, launches, deadLetter
    }

    /// Where a part of the output lies.
    enum Source {
        /// Written, at this range of ``writer``'s output.
        case written(Range<Int>)
        /// The record's own key or value.
        case record
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

    /// An empty output, its buffers to be grown by use.
    package init() {
        headers.reserveCapacity(32)
    }

    deinit {
        lent.deallocate()
    }

    /// Starts the next output of `kind` to `topic`: the value is written first.
    mutating func begin(_ kind: OutputRecord.Kind, to topic: Topic) {
        self.kind = kind
        self.topic = topic
        writer.reset()
        key = .record
        value = .record
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
                        func part(_ source: Source, record: UnsafeRawBufferPointer?) -> UnsafeRawBufferPointer? {
                            switch source {
                            case .written(let range): UnsafeRawBufferPointer(rebasing: written[range])
                            case .record: record
                            }
                        }
                        return body(
                            part(key, record: recordKey), part(value, record: recordValue),
                            UnsafeBufferPointer(rebasing: lent[..<self.headers.count]))
                    }
                }
            }
        }
    }

    /// The bytes of a name given in the code.
    private static func bytes(of name: StaticString) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
    }
}
