import Foundation
import TestSupport

/// A request a test produces, of one of the kinds the end-to-end tests mix, with the identifier
/// its outputs will carry: the record (``TestRecord``, from the requests topic) and what the
/// accounting needs to know of it.
struct TestRequest: Sendable {
    /// The kinds of request the end-to-end tests mix.
    enum Kind: String, Sendable, CaseIterable {
        /// An alert a `rewrite` extension modifies.
        case rewritten
        /// An alert routed to the webhook extension (category `SLOW`).
        case webhook
        /// An alert without mutable-content: delivered as is.
        case plainAlert
        /// A silent background push.
        case silent
        /// A badge-only update.
        case badge
        /// A VoIP push.
        case voip
        /// A device token that is not hexadecimal: `BadDeviceToken`.
        case badToken
        /// Priority 7: `BadPriority`.
        case badPriority
        /// A value over the size limit: `PayloadTooLarge`.
        case tooLarge
        /// Bytes that are not JSON: `InvalidPayload`.
        case garbage

        /// Whether the request is invalid (ends as a dead letter).
        var isInvalid: Bool { [.badToken, .badPriority, .tooLarge, .garbage].contains(self) }
    }

    var kind: Kind
    /// The record: produce ``TestRecord/producerRecord(topic:)``, decide ``TestRecord/requestRecord``.
    var record: TestRecord
    /// The `apns-id` header the request carries.
    var apnsID: String
    /// The device token (lowercase) the request is for.
    var token: String
    /// The request's position among its device's requests.
    var sequence: Int

    /// A request of `kind` for app `bundleID` and device `token`.
    static func make(_ kind: Kind, bundleID: String, token: String, sequence: Int) -> TestRequest {
        let apnsID = UUID().uuidString.lowercased()
        var headers = [("apns-topic", bundleID), ("apns-id", apnsID)]
        var key = token
        let custom = #""seq":\#(sequence),"device":"\#(token.prefix(8))""#
        let value: String
        switch kind {
        case .rewritten:
            value = #"{"aps":{"alert":{"title":"T\#(sequence)","body":"B"},"mutable-content":1},\#(custom)}"#
        case .webhook:
            value = #"{"aps":{"alert":{"title":"T\#(sequence)","body":"B"},"mutable-content":1,"category":"SLOW"},\#(custom)}"#
        case .plainAlert:
            value = #"{"aps":{"alert":"Hello \#(sequence)","sound":"default"},\#(custom)}"#
        case .silent:
            headers += [("apns-push-type", "background"), ("apns-priority", "5")]
            value = #"{"aps":{"content-available":1},\#(custom)}"#
        case .badge:
            value = #"{"aps":{"badge":\#(sequence % 10)},\#(custom)}"#
        case .voip:
            headers[0] = ("apns-topic", bundleID + ".voip")
            headers.append(("apns-push-type", "voip"))
            value = #"{"aps":{"alert":"Call"},\#(custom)}"#
        case .badToken:
            key = "zz-not-hex-\(token.prefix(8))"
            value = #"{"aps":{"alert":"x"}}"#
        case .badPriority:
            headers.append(("apns-priority", "7"))
            value = #"{"aps":{"alert":"x"}}"#
        case .tooLarge:
            value = #"{"aps":{"alert":"x"},"blob":""# + String(repeating: "a", count: 5_000) + #""}"#
        case .garbage:
            value = "\u{1}\u{2}not json at all"
        }
        return TestRequest(
            kind: kind, record: TestRecord(token: key, headers: headers, value: Array(value.utf8)), apnsID: apnsID, token: token,
            sequence: sequence
        )
    }

    /// `count` requests over `devices` devices of app `bundleID`, kinds drawn from `kinds` in turn
    /// (deterministic), each device's requests numbered from 0.
    static func mix(count: Int, devices: Int, bundleID: String, kinds: [Kind]) -> [TestRequest] {
        let tokens = (0..<devices).map { device in
            String(repeating: String(format: "%08x", device), count: 8)
        }
        var sequences = [Int](repeating: 0, count: devices)
        return (0..<count).map { index in
            let device = (index &* 7919) % devices
            defer { sequences[device] += 1 }
            return make(kinds[index % kinds.count], bundleID: bundleID, token: tokens[device], sequence: sequences[device])
        }
    }
}
