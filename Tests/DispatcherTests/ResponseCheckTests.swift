import Dispatcher
import Foundation
import JSON
import Notifications
import Testing

/// `ResponseCheck.allCases` is the order in which a response is checked (the validator's six, then
/// the dispatcher's `UnknownAction`), and a response's dead letter names its check by its reason:
/// what `explain` lists as passed, failed and not run for a response rests on both.
@Suite("Response checks (section 10)")
struct ResponseCheckTests {
    /// A response record under construction: the parts a breaker may change.
    struct Parts: Sendable {
        var token = Fixture.token()
        var headers: [(String, String)] = [("apns-topic", ResponseFixture.bundleID)]
        var value = ResponseFixture.value(.action("LIKE"), payload: ResponseFixture.payload(category: "MESSAGE")).serialized()

        /// The parts as a record from the responses topic.
        var record: RequestRecord { ResponseFixture.record(token: token, headers: headers, value: value) }

        /// The parts with header `name` set to `value` (removed when nil).
        func with(_ name: String, _ value: String?) -> Parts {
            var parts = self
            parts.headers.removeAll { $0.0 == name }
            if let value { parts.headers.append((name, value)) }
            return parts
        }
    }

    /// One way to break a check, and the parts of the record it changes (two breakers that change
    /// the same part cannot be combined).
    struct Breaker: Sendable, CustomTestStringConvertible {
        let check: ResponseCheck
        let parts: Set<String>
        let apply: @Sendable (Parts) -> Parts

        var testDescription: String { check.rawValue }
    }

    static let breakers: [Breaker] = [
        Breaker(check: .deviceToken, parts: ["key"]) { parts in
            var parts = parts
            parts.token = "abc"
            return parts
        },
        Breaker(check: .topicPresent, parts: ["topic"]) { $0.with("apns-topic", nil) },
        Breaker(check: .topicIsBundleID, parts: ["topic"]) { $0.with("apns-topic", ResponseFixture.bundleID + ".voip") },
        Breaker(check: .topicAllowed, parts: ["topic"]) { $0.with("apns-topic", "com.example.other") },
        Breaker(check: .appStateHeader, parts: ["app-state"]) { $0.with("app-state", "asleep") },
        Breaker(check: .responseShape, parts: ["value"]) { parts in
            var parts = parts
            parts.value = Array(#"{"actionIdentifier":"LIKE"}"#.utf8)
            return parts
        },
        Breaker(check: .actionOffered, parts: ["value"]) { parts in
            var parts = parts
            parts.value = ResponseFixture.value(.action("FORWARD"), payload: ResponseFixture.payload(category: "MESSAGE")).serialized()
            return parts
        },
    ]

    /// The reason a dispatcher of the fixture's chat app refuses `parts` for, nil when it does not.
    static func refusal(_ parts: Parts) throws -> RejectionReason? {
        let dispatcher = try Dispatcher(configuration: Configuration(yaml: ResponseFixture.yaml()), registry: ExtensionRegistry())
        return dispatcher.respond(parts.record, appStates: NoAppStates(), receivedAt: Date()).rejectionReason
    }

    @Test("every check has a breaker, listed in the order of allCases, and the unbroken response is valid")
    func everyCheck() throws {
        #expect(Self.breakers.map(\.check) == ResponseCheck.allCases)
        #expect(try Self.refusal(Parts()) == nil)
    }

    @Test("a response that breaks one check is refused for a reason of that check", arguments: breakers)
    func single(_ breaker: Breaker) throws {
        let reason = try #require(try Self.refusal(breaker.apply(Parts())))
        #expect(ResponseCheck(giving: reason) == breaker.check, "\(reason)")
    }

    @Test("of two broken checks, the earlier in allCases is the one reported")
    func order() throws {
        var pairs = 0
        for (index, first) in Self.breakers.enumerated() {
            for second in Self.breakers[(index + 1)...] where first.parts.isDisjoint(with: second.parts) {
                let reason = try #require(try Self.refusal(second.apply(first.apply(Parts()))))
                #expect(ResponseCheck(giving: reason) == first.check, "\(first.check) before \(second.check): \(reason)")
                pairs += 1
            }
        }
        #expect(pairs == 17)
    }
}
