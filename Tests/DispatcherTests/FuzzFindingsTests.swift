import Dispatcher
import Foundation
import JSON
import Notifications
import Records
import Testing
import TestSupport

/// What the fuzzer found in the decision (docs/testing.md, "Fuzzing"), each with the input it
/// found it with.
@Suite("fuzzer findings: the decision")
struct FuzzFindingsTests {
    /// The input, framed (`Sources/Fuzz/FuzzInput.swift`; dispatcher 2: every app keeps a badge
    /// ledger), is the record below:
    ///
    ///     20a0a…0a
    ///     apns-topic:com.example.news
    ///     badge-increment:3
    ///
    ///     {"aps":{"alert":"x"}}
    @Test("a badge ledger's increment: the decision describes the payload and count its delivery record carries")
    func ledgerIncrementDescribed() async throws {
        let dispatcher = try Fixture.dispatcher(Fixture.appYAML("    badgeLedger: true"))
        let record = TestRecord(
            token: String(repeating: "0a", count: 32), headers: [("apns-topic", Fixture.bundleID), ("badge-increment", "3")],
            value: Array(#"{"aps":{"alert":"x"}}"#.utf8)).requestRecord
        let result = await dispatcher.dispatch(record, appStates: NoAppStates(), receivedAt: Date(timeIntervalSince1970: 1_800_000_000))
        let delivery = try #require(result.delivery, "\(String(describing: result.rejectionReason))")
        let written = try result.deliveryValue()
        #expect(written["badgeCount"] == .number(JSONNumber(3)), "\(written)")
        #expect(written["payload"]?[path: ["aps", "badge"]] == .number(JSONNumber(3)), "\(written)")
        // Before the fix the decision said badgeCount nil and a payload without the badge.
        #expect(delivery.badgeCount == 3)
        #expect(written["payload"] == .object(delivery.content.payload.json), "\(delivery.content.payload.json)")
    }
}
