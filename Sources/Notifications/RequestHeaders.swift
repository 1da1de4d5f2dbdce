import Records

/// Where a request's headers are: the position of the last header with a value of each name the
/// rules read (matched without regard to case, as HTTP/2 names are), and the first `apns-*` name
/// that is repeated.
///
/// Positions, not values: the same positions read a record lent in place (``RecordView``) and an
/// owned one (`[RecordHeader]`), so one reading of the names serves both. The owned form also
/// keeps the headers, and reads values through the `RecordBytes` accessors.
struct RequestHeaders {
    /// The headers, when read from an owned record.
    private let headers: [RecordHeader]?
    /// The positions found.
    private(set) var positions = Positions()
    /// The first `apns-*` header name that appears more than once (as written in the record).
    private(set) var repeatedAPNSHeader: String?

    /// The position of each name's last header that has a value.
    struct Positions {
        var topic: Int?
        var pushType: Int?
        var apnsID: Int?
        var priority: Int?
        var expiration: Int?
        var collapseID: Int?
        var appState: Int?
        var traceparent: Int?
        var channelID: Int?
        var requestID: Int?
        var badgeIncrement: Int?
    }

    /// Reads the names of an owned record's headers.
    init(_ headers: [RecordHeader]) {
        self.headers = headers
        var reading = Reading()
        headers.withUnsafeBufferPointer { buffer in
            for index in buffer.indices {
                let hasValue = buffer[index].value != nil
                // The name's bytes in place: copying the header's name to call `withUTF8` was a
                // retain and a release per header (header names longer than 15 bytes live on the heap).
                let noted: Void? = buffer[index].name.utf8.withContiguousStorageIfAvailable {
                    reading.note(index, name: UnsafeRawBufferPointer($0), hasValue: hasValue)
                }
                if noted == nil {
                    var name = buffer[index].name
                    name.withUTF8 { reading.note(index, name: UnsafeRawBufferPointer($0), hasValue: hasValue) }
                }
            }
        }
        positions = reading.positions
        repeatedAPNSHeader = reading.repeated { headers.map(\.name) }
    }

    /// Reads the names of a record lent in place.
    init(_ record: borrowing RecordView) {
        headers = nil
        let lent = Self.positions(of: record)
        positions = lent.positions
        repeatedAPNSHeader = lent.repeated
    }

    /// Where a lent record's headers are, and its first repeated `apns-*` name.
    ///
    /// A struct rather than a tuple: Swift destroyed the tuple `(Positions, String?)` through the
    /// runtime's generic tuple witness (`tuple_destroy`), about 130 instructions a request.
    struct LentPositions {
        var positions: Positions
        var repeated: String?
    }

    /// The positions of a record lent in place, and its first repeated `apns-*` name: a value
    /// without references, so the in-place validation copies nothing of it.
    static func positions(of record: borrowing RecordView) -> LentPositions {
        var reading = Reading()
        for index in 0..<record.headerCount {
            record.withUnsafeHeaderBytes(index) { name, value in reading.note(index, name: name, hasValue: value != nil) }
        }
        let repeated = reading.repeated {
            (0..<record.headerCount).map { index in record.withUnsafeHeaderBytes(index) { name, _ in String(decoding: name, as: UTF8.self) } }
        }
        return LentPositions(positions: reading.positions, repeated: repeated)
    }

    /// One pass over the names: positions, and repeats of `apns-*` names.
    private struct Reading {
        var positions = Positions()
        /// The known `apns-*` names seen, a bit each.
        var seenKnown: UInt8 = 0
        /// The first header whose known `apns-*` name was seen before.
        var repeatedKnown: Int?
        /// How many other `apns-*` names came (compared by name only when two or more do, so the
        /// usual request allocates nothing).
        var otherAPNSCount = 0

        mutating func note(_ index: Int, name bytes: UnsafeRawBufferPointer, hasValue: Bool) {
            // The known names all differ in length, so the length picks the one candidate to compare.
            var bit: UInt8 = 0
            switch bytes.count {
            case 10 where RequestHeaders.matches(bytes, "apns-topic"):
                bit = 1
                if hasValue { positions.topic = index }
            case 14 where RequestHeaders.matches(bytes, "apns-push-type"):
                bit = 2
                if hasValue { positions.pushType = index }
            case 7 where RequestHeaders.matches(bytes, "apns-id"):
                bit = 4
                if hasValue { positions.apnsID = index }
            case 13 where RequestHeaders.matches(bytes, "apns-priority"):
                bit = 8
                if hasValue { positions.priority = index }
            case 15 where RequestHeaders.matches(bytes, "apns-expiration"):
                bit = 16
                if hasValue { positions.expiration = index }
            case 15 where RequestHeaders.matches(bytes, "apns-channel-id"):
                bit = 64
                if hasValue { positions.channelID = index }
            case 15 where RequestHeaders.matches(bytes, "apns-request-id"):
                bit = 128
                if hasValue { positions.requestID = index }
            case 15 where RequestHeaders.matches(bytes, "badge-increment"): if hasValue { positions.badgeIncrement = index }
            case 16 where RequestHeaders.matches(bytes, "apns-collapse-id"):
                bit = 32
                if hasValue { positions.collapseID = index }
            case 9 where RequestHeaders.matches(bytes, "app-state"): if hasValue { positions.appState = index }
            case 11 where RequestHeaders.matches(bytes, "traceparent"): if hasValue { positions.traceparent = index }
            default:
                if bytes.count >= 5, RequestHeaders.matches(UnsafeRawBufferPointer(rebasing: bytes[..<5]), "apns-") { otherAPNSCount += 1 }
            }
            if bit != 0 {
                if seenKnown & bit != 0, repeatedKnown == nil { repeatedKnown = index }
                seenKnown |= bit
            }
        }

        /// The first repeated `apns-*` name, from every name (read only when some name may repeat).
        func repeated(names: () -> [String]) -> String? {
            guard repeatedKnown != nil || otherAPNSCount > 1 else { return nil }
            let names = names()
            let repeatedOther = otherAPNSCount > 1 ? RequestHeaders.firstRepeatedAPNSName(names) : nil
            switch (repeatedKnown, repeatedOther) {
            case (let known?, let other?): return names[min(known, other)]  // the earlier of the two
            case (let known?, nil): return names[known]
            case (nil, let other?): return names[other]
            case (nil, nil): return nil
            }
        }
    }

    /// The position of the first `apns-*` name that repeats an earlier one, any case.
    private static func firstRepeatedAPNSName(_ names: [String]) -> Int? {
        var seen: Set<String> = []
        for (index, name) in names.enumerated() {
            let lowered = name.lowercased()
            guard lowered.hasPrefix("apns-") else { continue }
            if !seen.insert(lowered).inserted { return index }
        }
        return nil
    }

    var topic: RecordBytes? { value(at: positions.topic) }
    var pushType: RecordBytes? { value(at: positions.pushType) }
    var apnsID: RecordBytes? { value(at: positions.apnsID) }
    var priority: RecordBytes? { value(at: positions.priority) }
    var expiration: RecordBytes? { value(at: positions.expiration) }
    var collapseID: RecordBytes? { value(at: positions.collapseID) }
    var appState: RecordBytes? { value(at: positions.appState) }
    var traceparent: RecordBytes? { value(at: positions.traceparent) }
    var channelID: RecordBytes? { value(at: positions.channelID) }
    var requestID: RecordBytes? { value(at: positions.requestID) }

    /// An owned record's header value at `position`.
    private func value(at position: Int?) -> RecordBytes? {
        position.flatMap { headers?[$0].value }
    }

    /// Whether `name` is `expected` (lowercase ASCII, of the same length) without regard to ASCII
    /// case. Names as providers write them (lowercase) are compared eight bytes at a time, with
    /// two loads that overlap when the length is not a multiple of eight; the byte loop folds case.
    @inline(__always)
    static func matches(_ name: UnsafeRawBufferPointer, _ expected: StaticString) -> Bool {
        let lower = expected.utf8Start
        let count = name.count
        if count >= 8, let base = name.baseAddress {
            let wanted = UnsafeRawPointer(lower)
            if base.loadUnaligned(as: UInt64.self) == wanted.loadUnaligned(as: UInt64.self),
                base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                    == wanted.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            {
                return true
            }
        }
        for position in 0..<count {
            let byte = name[position]
            let folded = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
            guard folded == lower[position] else { return false }
        }
        return true
    }
}
