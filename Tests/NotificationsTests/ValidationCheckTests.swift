import Notifications
import Testing
import TestSupport

/// `ValidationCheck.allCases` is the validator's order, and a rejection names the check that failed:
/// what `explain` lists as passed, failed and not run rests on both.
@Suite("Validation checks")
struct ValidationCheckTests {
    /// One way to break a check, and the parts of the record it changes (two breakers that change
    /// the same part cannot be combined).
    struct Breaker: CustomTestStringConvertible {
        let check: ValidationCheck
        let parts: Set<String>
        let apply: @Sendable (TestRecord) -> TestRecord

        var testDescription: String { check.rawValue }
    }

    /// A breaker for every check, so that the valid base record fails exactly that check.
    static let breakers: [Breaker] = [
        Breaker(check: .duplicateHeaders, parts: ["apns-id"]) {
            $0.header("apns-id", "00000000-0000-4000-8000-000000000001").addingHeader("APNS-ID", "00000000-0000-4000-8000-000000000002")
        },
        Breaker(check: .deviceToken, parts: ["key"]) { $0.key("abc") },
        Breaker(check: .topicPresent, parts: ["topic"]) { $0.header("apns-topic", nil) },
        Breaker(check: .pushTypeHeader, parts: ["push-type"]) { $0.header("apns-push-type", "fax") },
        Breaker(check: .messageIDHeader, parts: ["apns-id"]) { $0.header("apns-id", "not-a-uuid") },
        Breaker(check: .priorityHeader, parts: ["priority"]) { $0.header("apns-priority", "7") },
        Breaker(check: .expirationHeader, parts: ["expiration"]) { $0.header("apns-expiration", "tomorrow") },
        Breaker(check: .collapseIDHeader, parts: ["collapse-id"]) { $0.header("apns-collapse-id", String(repeating: "c", count: 65)) },
        Breaker(check: .appStateHeader, parts: ["app-state"]) { $0.header("app-state", "asleep") },
        Breaker(check: .badgeIncrementHeader, parts: ["badge-increment"]) { $0.header("badge-increment", "+0") },
        Breaker(check: .payloadPresent, parts: ["value"]) { $0.payload("") },
        Breaker(check: .payloadSize, parts: ["value"]) {
            $0.payload(#"{"aps":{"alert":""# + String(repeating: "x", count: 5_000) + #""}}"#)
        },
        Breaker(check: .payloadValid, parts: ["value"]) { $0.payload(#"{"aps":1}"#) },
        Breaker(check: .backgroundPriority, parts: ["push-type", "priority", "value"]) {
            $0.header("apns-push-type", "background").header("apns-priority", "10").payload(#"{"aps":{"content-available":1}}"#)
        },
        Breaker(check: .liveActivityPriority, parts: ["push-type", "priority", "topic"]) {
            $0.header("apns-push-type", "liveactivity").header("apns-priority", "1").header("apns-topic", "com.example.app.push-type.liveactivity")
        },
        Breaker(check: .topicSuffix, parts: ["topic"]) { $0.header("apns-topic", "com.example.app.voip") },
        Breaker(check: .topicAllowed, parts: ["topic"]) { $0.header("apns-topic", "com.other.app") },
    ]

    /// Every bundle ID the validator allows: `com.other.app` is not one of them.
    static let validator = RequestValidator(allowedBundleIDs: ["com.example.app"])

    @Test("every check has a breaker, listed in the order of allCases")
    func everyCheck() {
        // The ledger's check reads the apps' settings, the token checks and the request limit the
        // state tables: the dispatcher runs them (DispatcherTests).
        #expect(Self.breakers.map(\.check) == ValidationCheck.allCases.filter { !$0.runsInDispatcher })
    }

    @Test("a record that breaks one check is refused by that check", arguments: breakers)
    func single(_ breaker: Breaker) throws {
        let rejection = try #require(breaker.apply(TestRecord.forValidator()).rejection(Self.validator))
        #expect(rejection.check == breaker.check, "\(rejection)")
    }

    @Test("of two broken checks, the earlier in allCases is the one reported")
    func order() throws {
        var pairs = 0
        for (index, first) in Self.breakers.enumerated() {
            for second in Self.breakers[(index + 1)...] where first.parts.isDisjoint(with: second.parts) {
                let fixture = second.apply(first.apply(TestRecord.forValidator()))
                let rejection = try #require(fixture.rejection(Self.validator))
                #expect(rejection.check == first.check, "\(first.check) before \(second.check): \(rejection)")
                pairs += 1
            }
        }
        #expect(pairs > 60)
    }

    @Test("BadPriority names its check: the header's value, or priority 10 for a background push")
    func badPriority() throws {
        let header = try #require(TestRecord.forValidator().header("apns-priority", "7").rejection())
        let background = try #require(
            TestRecord.forValidator().header("apns-priority", "10").payload(#"{"aps":{"content-available":1}}"#).rejection())
        #expect(header.reason == .badPriority)
        #expect(header.check == .priorityHeader)
        #expect(background.reason == .badPriority)
        #expect(background.check == .backgroundPriority)
    }

    @Test("a request reason comes from one request check; OutputRejected, ServiceUnavailable, the response-only and the broadcast-only reasons from none")
    func reasons() {
        // InvalidResponse and UnknownAction are about a response's value and actions; the broadcast
        // reasons come from a broadcast's own checks (section 15); ServiceUnavailable from a full
        // state table: no device request check gives them.
        let broadcastOnly: Set<RejectionReason> = [.missingPushType, .missingChannelId, .badChannelId, .featureNotEnabled, .channelNotRegistered]
        let noRequestCheck = Set<RejectionReason>([.outputRejected, .invalidResponse, .unknownAction, .serviceUnavailable]).union(broadcastOnly)
        for reason in RejectionReason.allCases {
            #expect((ValidationCheck(giving: reason) == nil) == noRequestCheck.contains(reason), "\(reason)")
        }
        for reason in broadcastOnly {
            #expect(BroadcastCheck(giving: reason) != nil, "\(reason)")
        }
        #expect(Rejection(.outputRejected, "too large").check == nil)
        #expect(Rejection(.unknownAction, "not declared").check == nil)
    }

    @Test("a response reason comes from exactly one response check, in the order of allCases; the others from none")
    func responseReasons() {
        // Section 10's checks, in its order, with the reasons each gives.
        let expected: [(ResponseCheck, [RejectionReason])] = [
            (.deviceToken, [.missingDeviceToken, .badDeviceToken]), (.topicPresent, [.missingTopic]), (.topicIsBundleID, [.badTopic]),
            (.topicAllowed, [.topicDisallowed]), (.appStateHeader, [.badAppState]), (.responseShape, [.invalidResponse]),
            (.actionOffered, [.unknownAction]),
        ]
        #expect(expected.map(\.0) == ResponseCheck.allCases)
        let responseReasons = expected.flatMap(\.1)
        for reason in RejectionReason.allCases {
            let check = ResponseCheck(giving: reason)
            #expect(check == expected.first { $0.1.contains(reason) }?.0, "\(reason)")
            #expect((check == nil) == !responseReasons.contains(reason), "\(reason)")
        }
    }
}
