import Records
/// The request's APNs headers, found by name without regard to case; of repeated names, the last wins
/// (a repeated `apns-*` name is noted in ``repeatedAPNSHeader``: `DuplicateHeaders`, section 1).
///
/// A header without a value counts as absent. Only positions are kept while scanning, so finding the
/// headers copies nothing; a value is read when a rule asks for it.
struct RequestHeaders {
    /// The headers as received.
    private let headers: [RecordHeader]
    /// Positions of the known headers in `headers`.
    private var positions = Positions()
    /// The name (as received) of the first `apns-*` header that repeats an earlier one, nil when none does.
    private(set) var repeatedAPNSHeader: String?

    /// Where each known header is.
    private struct Positions {
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
    }

    /// Finds the known headers in one pass.
    init(_ headers: [RecordHeader]) {
        self.headers = headers
        var found = Positions()
        // Repeats of the known apns-* names are seen with a bit each; other apns-* names (rare)
        // are compared by name only when two or more of them come, so the usual request allocates nothing.
        var seenKnown: UInt8 = 0
        var otherAPNSCount = 0
        var repeatedKnown: Int?
        headers.withUnsafeBufferPointer { buffer in
            for index in buffer.indices {
                let hasValue = buffer[index].value != nil
                // The name's bytes in place: copying the header's name to call `withUTF8` was a
                // retain and a release per header (header names longer than 15 bytes live on the heap).
                func classify(_ bytes: UnsafeBufferPointer<UInt8>) {
                    // The known names all differ in length, so the length picks the one candidate to compare.
                    var bit: UInt8 = 0
                    switch bytes.count {
                    case 10 where Self.matches(bytes, "apns-topic"):
                        bit = 1
                        if hasValue { found.topic = index }
                    case 14 where Self.matches(bytes, "apns-push-type"):
                        bit = 2
                        if hasValue { found.pushType = index }
                    case 7 where Self.matches(bytes, "apns-id"):
                        bit = 4
                        if hasValue { found.apnsID = index }
                    case 13 where Self.matches(bytes, "apns-priority"):
                        bit = 8
                        if hasValue { found.priority = index }
                    case 15 where Self.matches(bytes, "apns-expiration"):
                        bit = 16
                        if hasValue { found.expiration = index }
                    case 15 where Self.matches(bytes, "apns-channel-id"):
                        bit = 64
                        if hasValue { found.channelID = index }
                    case 15 where Self.matches(bytes, "apns-request-id"):
                        bit = 128
                        if hasValue { found.requestID = index }
                    case 16 where Self.matches(bytes, "apns-collapse-id"):
                        bit = 32
                        if hasValue { found.collapseID = index }
                    case 9 where Self.matches(bytes, "app-state"): if hasValue { found.appState = index }
                    case 11 where Self.matches(bytes, "traceparent"): if hasValue { found.traceparent = index }
                    default:
                        if bytes.count >= 5, Self.matches(UnsafeBufferPointer(rebasing: bytes[..<5]), "apns-") { otherAPNSCount += 1 }
                    }
                    if bit != 0 {
                        if seenKnown & bit != 0, repeatedKnown == nil { repeatedKnown = index }
                        seenKnown |= bit
                    }
                }
                if buffer[index].name.utf8.withContiguousStorageIfAvailable(classify) == nil {
                    var name = buffer[index].name
                    name.withUTF8(classify)
                }
            }
        }
        positions = found
        let repeatedOther = otherAPNSCount > 1 ? Self.firstRepeatedAPNSName(headers) : nil
        switch (repeatedKnown, repeatedOther) {
        case (let known?, let other?):
            // The earlier of the two in the record.
            repeatedAPNSHeader = headers[min(known, other.index)].name
        case (let known?, nil): repeatedAPNSHeader = headers[known].name
        case (nil, let other?): repeatedAPNSHeader = other.name
        case (nil, nil): break
        }
    }

    /// The first header whose `apns-*` name (as received) equals, without regard to ASCII case, an
    /// earlier one's; the known names are left to the caller.
    private static func firstRepeatedAPNSName(_ headers: [RecordHeader]) -> (name: String, index: Int)? {
        var seen: Set<String> = []
        for (index, header) in headers.enumerated() {
            let lowered = header.name.lowercased()
            guard lowered.hasPrefix("apns-") else { continue }
            if !seen.insert(lowered).inserted { return (header.name, index) }
        }
        return nil
    }

    /// `apns-topic`.
    var topic: RecordBytes? { value(at: positions.topic) }
    /// `apns-push-type`.
    var pushType: RecordBytes? { value(at: positions.pushType) }
    /// `apns-id`.
    var apnsID: RecordBytes? { value(at: positions.apnsID) }
    /// `apns-priority`.
    var priority: RecordBytes? { value(at: positions.priority) }
    /// `apns-expiration`.
    var expiration: RecordBytes? { value(at: positions.expiration) }
    /// `apns-collapse-id`.
    var collapseID: RecordBytes? { value(at: positions.collapseID) }
    /// `app-state`.
    var appState: RecordBytes? { value(at: positions.appState) }
    /// `traceparent`.
    var traceparent: RecordBytes? { value(at: positions.traceparent) }
    /// `apns-channel-id` (section 15): its presence, an empty value included, makes a broadcast.
    var channelID: RecordBytes? { value(at: positions.channelID) }
    /// `apns-request-id` (section 15): a broadcast's identifier.
    var requestID: RecordBytes? { value(at: positions.requestID) }

    /// The value of the header at `position`, if any.
    private func value(at position: Int?) -> RecordBytes? {
        position.flatMap { headers[$0].value }
    }

    /// Whether `name` equals the lowercase `expected`, ignoring ASCII case.
    private static func matches(_ name: UnsafeBufferPointer<UInt8>, _ expected: StaticString) -> Bool {
        let lower = expected.utf8Start
        for position in 0..<name.count {
            let byte = name[position]
            let folded = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
            guard folded == lower[position] else { return false }
        }
        return true
    }
}
