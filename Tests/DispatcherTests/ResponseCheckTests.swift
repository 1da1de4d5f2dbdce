import Dispatcher
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// `ResponseCheck.allCases` is the order in which a response is checked (the validator's six, then
/// the dispatcher's `UnknownAction`), and a response's dead letter names its check by its reason:
/// what `explain` lists as passed, failed and not run for a response rests on both.
@Suite("Response checks (section 10)")
struct ResponseCheckTests {
    /// The valid response the breakers start from: a LIKE of a MESSAGE notification of the chat app.
    static let valid = TestRecord(
        headers: [("apns-topic", ResponseFixture.bundleID)],
        value: ResponseFixture.value(.action("LIKE"), payload: ResponseFixture.payload(category: "MESSAGE")).serialized(),
        topic: TestRecord.responsesTopic)

    /// One way to break a check, and the parts of the record it changes (two breakers that change
    /// the same part cannot be combined).
    struct Breaker: Sendable, CustomTestStringConvertible {
        let check: ResponseCheck
        let parts: Set<String>
        let apply: @Sendable (TestRecord) -> TestRecord

        var testDescription: String { check.rawValue }
    }

    static let breakers: [Breaker] = [
        Breaker(check: .deviceToken, parts: ["key"]) { $0.key("abc") },
        Breaker(check: .topicPresent, parts: ["topic"]) { $0.header("apns-topic", nil) },
        Breaker(check: .topicIsBundleID, parts: ["topic"]) { $0.header("apns-topic", ResponseFixture.bundleID + ".voip") },
        Breaker(check: .topicAllowed, parts: ["topic"]) { $0.header("apns-topic", "com.example.other") },
        Breaker(check: .appStateHeader, parts: ["app-state"]) { $0.header("app-state", "asleep") },
        Breaker(check: .responseShape, parts: ["value"]) { $0.payload(#"{"actionIdentifier":"LIKE"}"#) },
        Breaker(check: .actionOffered, parts: ["value"]) { record in
            var record = record
            record.value = ResponseFixture.value(.action("FORWARD"), payload: ResponseFixture.payload(category: "MESSAGE")).serialized()
            return record
        },
    ]

    /// The reason a dispatcher of the fixture's chat app refuses `record` for, nil when it does not.
    static func refusal(_ record: TestRecord) throws -> RejectionReason? {
        let dispatcher = try Dispatcher(configuration: Configuration(yaml: ResponseFixture.yaml()), registry: ExtensionRegistry())
        return dispatcher.respond(record.requestRecord, appStates: NoAppStates(), receivedAt: Date()).rejectionReason
    }

    @Test("every check has a breaker, listed in the order of allCases, and the unbroken response is valid")
    func everyCheck() throws {
        #expect(Self.breakers.map(\.check) == ResponseCheck.allCases)
        #expect(try Self.refusal(Self.valid) == nil)
    }

    @Test("a response that breaks one check is refused for a reason of that check", arguments: breakers)
    func single(_ breaker: Breaker) throws {
        let reason = try #require(try Self.refusal(breaker.apply(Self.valid)))
        #expect(ResponseCheck(giving: reason) == breaker.check, "\(reason)")
    }

    @Test("of two broken checks, the earlier in allCases is the one reported")
    func order() throws {
        var pairs = 0
        for (index, first) in Self.breakers.enumerated() {
            for second in Self.breakers[(index + 1)...] where first.parts.isDisjoint(with: second.parts) {
                let reason = try #require(try Self.refusal(second.apply(first.apply(Self.valid))))
                #expect(ResponseCheck(giving: reason) == first.check, "\(first.check) before \(second.check): \(reason)")
                pairs += 1
            }
        }
        #expect(pairs == 17)
    }
}
