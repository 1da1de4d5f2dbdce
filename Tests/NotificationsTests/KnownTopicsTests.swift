@testable import Notifications
import Records
import Testing
import TestSupport

@Suite("The configured apps' topics, looked up by their bytes")
struct KnownTopicsTests {
    /// Configured bundle IDs, one of which itself ends in a push type's suffix.
    static let bundleIDs: Set<String> = ["com.example.app", "com.example.news", "com.example.app.voip"]

    /// Every topic worth asking about: each configured and one unknown bundle ID, alone and with
    /// each suffix, and a suffix alone.
    static var topics: [String] {
        let stems = bundleIDs.sorted() + ["com.other.app", ""]
        return Set(stems.flatMap { stem in [stem] + PushType.suffixed.map { stem + $0.suffix } }).sorted()
    }

    /// What check 6 makes of a topic.
    enum Outcome: Equatable {
        case accepted(bundleID: String)
        case rejected(RejectionReason)
    }

    /// What the general rules (check 6) make of a topic for a push type.
    static func generalRules(_ topic: String, _ pushType: PushType) -> Outcome {
        do throws(Rejection) {
            let bundleID = try RequestValidator.bundleID(topic: topic, pushType: pushType)
            if pushType != .mdm { try RequestValidator.requireAllowed(bundleID, topic: topic, allowed: bundleIDs) }
            return .accepted(bundleID: bundleID)
        } catch {
            return .rejected(error.reason)
        }
    }

    @Test("a hit answers what the general rules answer, and every topic they accept is a hit")
    func hitsAgreeWithTheRules() {
        let known = KnownTopics(bundleIDs: Self.bundleIDs)
        var hits = 0
        for topic in Self.topics {
            for pushType in PushType.allCases {
                let general = Self.generalRules(topic, pushType)
                guard let index = Array(topic.utf8).withUnsafeBytes({ known.lookUp($0, pushType: pushType) }) else {
                    // Left to the rules, of the topics they accept: a configured bundle ID that itself ends
                    // in a suffix, and any MDM identifier (mdm is not checked against the apps).
                    if case .accepted(let bundleID) = general, pushType != .mdm {
                        #expect(RequestValidator.suffixedPushType(of: bundleID) != nil, "\(topic) as \(pushType) missed")
                    }
                    continue
                }
                hits += 1
                let entry = known[index]
                #expect(entry.topic == topic)
                #expect(general == .accepted(bundleID: entry.bundleID), "\(topic) as \(pushType)")
            }
        }
        // Two bundle IDs alone for alert, background and mdm, and all three with each of the eight suffixes.
        #expect(hits == 2 * 3 + 3 * PushType.suffixed.count)
    }

    @Test("a request for a configured app keeps its topic and bundle ID; others are checked as before")
    func validatorUsesTheTable() throws {
        let validator = RequestValidator(allowedBundleIDs: Self.bundleIDs)
        let voip = try TestRecord.forValidator().header("apns-topic", "com.example.app.voip").header("apns-push-type", "voip").validate(validator).get()
        #expect(voip.topic == "com.example.app.voip")
        #expect(voip.bundleID == "com.example.app")
        let alert = try TestRecord.forValidator().header("apns-topic", "com.example.news").validate(validator).get()
        #expect(alert.topic == "com.example.news")
        #expect(alert.bundleID == "com.example.news")
        #expect(TestRecord.forValidator().header("apns-topic", "com.other.app").rejection(validator)?.reason == .topicDisallowed)
        #expect(TestRecord.forValidator().header("apns-topic", "com.example.news.voip").rejection(validator)?.reason == .badTopic)
        #expect(TestRecord.forValidator().header("apns-topic", "com.example.news").header("apns-push-type", "voip").rejection(validator)?.reason == .badTopic)
    }
}
