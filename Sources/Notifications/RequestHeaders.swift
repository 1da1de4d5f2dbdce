/// The request's APNs headers, found by name without regard to case; of repeated names, the last wins.
///
/// A header without a value counts as absent. Only positions are kept while scanning, so finding the
/// headers copies nothing; a value is read when a rule asks for it.
struct RequestHeaders {
    /// The headers as received.
    private let headers: [RecordHeader]
    /// Positions of the known headers in `headers`.
    private var positions = Positions()

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
    }

    /// Finds the known headers in one pass.
    init(_ headers: [RecordHeader]) {
        self.headers = headers
        var found = Positions()
        headers.withUnsafeBufferPointer { buffer in
            for index in buffer.indices where buffer[index].value != nil {
                var name = buffer[index].name
                name.withUTF8 { bytes in
                    // The known names all differ in length, so the length picks the one candidate to compare.
                    switch bytes.count {
                    case 10 where Self.matches(bytes, "apns-topic"): found.topic = index
                    case 14 where Self.matches(bytes, "apns-push-type"): found.pushType = index
                    case 7 where Self.matches(bytes, "apns-id"): found.apnsID = index
                    case 13 where Self.matches(bytes, "apns-priority"): found.priority = index
                    case 15 where Self.matches(bytes, "apns-expiration"): found.expiration = index
                    case 16 where Self.matches(bytes, "apns-collapse-id"): found.collapseID = index
                    case 9 where Self.matches(bytes, "app-state"): found.appState = index
                    case 11 where Self.matches(bytes, "traceparent"): found.traceparent = index
                    default: break
                    }
                }
            }
        }
        positions = found
    }

    /// `apns-topic`.
    var topic: [UInt8]? { value(at: positions.topic) }
    /// `apns-push-type`.
    var pushType: [UInt8]? { value(at: positions.pushType) }
    /// `apns-id`.
    var apnsID: [UInt8]? { value(at: positions.apnsID) }
    /// `apns-priority`.
    var priority: [UInt8]? { value(at: positions.priority) }
    /// `apns-expiration`.
    var expiration: [UInt8]? { value(at: positions.expiration) }
    /// `apns-collapse-id`.
    var collapseID: [UInt8]? { value(at: positions.collapseID) }
    /// `app-state`.
    var appState: [UInt8]? { value(at: positions.appState) }
    /// `traceparent`.
    var traceparent: [UInt8]? { value(at: positions.traceparent) }

    /// The value of the header at `position`, if any.
    private func value(at position: Int?) -> [UInt8]? {
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
