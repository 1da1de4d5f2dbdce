/// The request's APNs headers, found by name without regard to case; of repeated names, the last wins.
///
/// A header without a value counts as absent.
struct RequestHeaders {
    var topic: [UInt8]?
    var pushType: [UInt8]?
    var apnsID: [UInt8]?
    var priority: [UInt8]?
    var expiration: [UInt8]?
    var collapseID: [UInt8]?
    var appState: [UInt8]?
    var traceparent: [UInt8]?

    /// Picks the known headers out of `headers` in one pass.
    init(_ headers: [RecordHeader]) {
        for header in headers {
            guard let value = header.value else { continue }
            // The known names all differ in length, so the length picks the one candidate to compare.
            switch header.name.utf8.count {
            case 10 where Self.matches(header.name, "apns-topic"): topic = value
            case 14 where Self.matches(header.name, "apns-push-type"): pushType = value
            case 7 where Self.matches(header.name, "apns-id"): apnsID = value
            case 13 where Self.matches(header.name, "apns-priority"): priority = value
            case 15 where Self.matches(header.name, "apns-expiration"): expiration = value
            case 16 where Self.matches(header.name, "apns-collapse-id"): collapseID = value
            case 9 where Self.matches(header.name, "app-state"): appState = value
            case 11 where Self.matches(header.name, "traceparent"): traceparent = value
            default: break
            }
        }
    }

    /// Whether `name` equals the lowercase `expected`, ignoring ASCII case.
    private static func matches(_ name: String, _ expected: StaticString) -> Bool {
        let lower = expected.utf8Start
        var name = name
        return name.withUTF8 { bytes in
            for position in 0..<bytes.count {
                let byte = bytes[position]
                let folded = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
                guard folded == lower[position] else { return false }
            }
            return true
        }
    }
}
