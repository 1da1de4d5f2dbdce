@testable import Dispatcher
import Records
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// The delivery and launch records written straight into bytes (`DeliveryJSON.deliveryBytes`,
/// `launchBytes`) against the tree they replace (`DeliveryJSON.delivery`, `launch`, serialised):
/// byte for byte the same, for every push type and a corpus of payloads.
@Suite("Delivery bytes")
struct DeliveryBytesTests {
    /// Apps with a content extension (presentation), an extension that modifies (extension report,
    /// attachments aside) and one in the legacy profile's absence.
    static let yaml = """
        apps:
          com.example.app:
            contentExtensions: [{name: NewsView, categories: [NEWS, CHAT], initialContentSizeRatio: 0.75, mediaPlayPauseButton: overlay}]
            categories:
              CHAT: {serviceExtension: {kind: rewrite, set: {aps.thread-id: "t-{{aps.category}}", custom.n: 1.50}}}
        """

    /// Payloads with escapes, unicode, big numbers, nesting, whitespace and repeated keys.
    static let payloads: [String] = [
        #"{"aps":{"alert":"Goal","badge":1},"big":123456789012345678901234567890,"f":1.50}"#,
        #"{"aps":{"alert":{"title":"T \"q\" \\ \/ \u00e9 \ud83d\ude00","body":"é ✨ 中"},"mutable-content":1,"category":"NEWS"}}"#,
        #"{"aps":{"alert":"x","mutable-content":1,"category":"CHAT"},"custom":{"n":1,"deep":[[[{"a":[1e400,-0.0,0E-7]}]]]}}"#,
        #"{"aps":{"content-available":1},"sync":{"since":1700000000123,"kinds":[1,2,3]}}"#,
        " {\"aps\" : {\"badge\": 0 , \"sound\":\"default\"}, \"s\": \"\\u001F\\u0041\" }\n",
        #"{"aps":{"alert":"a","alert":"b"},"k":{"x":1,"x":2}}"#,
        #"{"aps":{"sound":{"critical":1,"name":"a.caf","volume":0.8},"interruption-level":"critical"},"e":"\b\f\n\r\t\u0000"}"#,
        #"{"aps":{"content-state":{"score":"2-1"},"event":"update","timestamp":1700000000,"x":"\u2028"}}"#,
    ]

    /// The push types with the topic each needs.
    static let pushTypes: [(PushType, String)] = PushType.allCases.map { type in
        (type, type == .mdm ? "com.example.mdm" : Fixture.bundleID + (type.topicSuffix ?? ""))
    }

    @Test("every push type, app state and payload: the bytes equal the serialised tree")
    func equalToTree() async throws {
        let dispatcher = try Fixture.dispatcher(Self.yaml)
        let receivedAt = Date(timeIntervalSince1970: 1_800_000_000.25)
        var compared = 0
        for (pushType, topic) in Self.pushTypes {
            for payload in Self.payloads {
                for state in ["foreground", "notRunning", "forceQuit"] {
                    var headers = [("apns-topic", topic), ("apns-push-type", pushType.rawValue), ("app-state", state)]
                    if pushType == .background { headers.append(("apns-priority", "5")) }
                    if compared % 3 == 0 { headers.append(("apns-collapse-id", "c-\"\(compared)\"")) }
                    // An mdm payload carries mdm (section 2).
                    var text = payload
                    if pushType == .mdm, let brace = text.firstIndex(of: "{") {
                        text.insert(contentsOf: #""mdm":"m","#, at: text.index(after: brace))
                    }
                    let record = TestRecord(headers: headers, value: Array(text.utf8), offset: Int64(compared)).requestRecord
                    let result = await dispatcher.dispatch(record, appStates: NoAppStates(), receivedAt: receivedAt)
                    let delivery = try #require(result.delivery, "\(pushType) \(payload): \(String(describing: result.rejectionReason))")
                    let tree = JSONValue.object(DeliveryJSON.delivery(delivery)).serialized()
                    #expect(result.outputs[0].value == RecordBytes(tree), "\(pushType) \(state) \(payload)")
                    #expect(DeliveryJSON.deliveryBytes(delivery) == tree)
                    if let launch = delivery.launch {
                        let request = delivery.request
                        let launchTree = JSONValue.object(
                            DeliveryJSON.launch(
                                apnsID: request.apnsID.description, deviceToken: request.deviceToken, bundleID: request.bundleID,
                                trigger: launch, payload: delivery.content.payload)
                        ).serialized()
                        #expect(result.outputs.count == 2)
                        #expect(result.outputs.last?.value == RecordBytes(launchTree), "\(pushType) \(state) \(payload)")
                    }
                    compared += 1
                }
            }
        }
        #expect(compared == Self.pushTypes.count * Self.payloads.count * 3)
    }

    @Test("a modified delivery, its extension report and presentation, written the same way")
    func modified() async throws {
        let dispatcher = try Fixture.dispatcher(Self.yaml)
        let record = TestRecord(value: Array(Self.payloads[2].utf8)).requestRecord
        let result = await dispatcher.dispatch(record, appStates: NoAppStates(), receivedAt: Date())
        let delivery = try #require(result.delivery)
        #expect(delivery.disposition == .modified)
        #expect(delivery.extensionReport != nil)
        #expect(delivery.presentation != nil)
        #expect(result.outputs[0].value == RecordBytes(JSONValue.object(DeliveryJSON.delivery(delivery)).serialized()))
    }
}
