import Dispatcher
import Foundation
import JSON
import Notifications
import Records
import Testing
import TestSupport

/// Every output is measured against `kafka.maxMessageBytes` before it is written, so a record
/// that could never be produced is decided by the rules, the same offline as in the worker.
@Suite("Outputs fitted to the output limit")
struct OutputFitTests {
    /// 16 KiB: the lowest limit the configuration takes.
    static let limit = 16_384

    /// An app whose extension adds a custom key of `padding` bytes.
    static func padded(_ padding: Int) -> String {
        Fixture.appYAML(
            """
                serviceExtension:
                  kind: rewrite
                  set:
                    pad: \(String(repeating: "p", count: padding))
            """,
            dispatch: "kafka:\n  maxMessageBytes: \(limit)")
    }

    @Test("a modified delivery too large to write is delivered with the original content, reason output-too-large")
    func modifiedTooLarge() async throws {
        let result = try await Fixture.dispatch(Self.padded(20_000), payload: Fixture.mutableAlert())
        #expect(result.disposition == .original)
        #expect(result.reason == .outputTooLarge)
        #expect(result.extensionOutcome == .outputTooLarge)
        #expect(result.extensionName == "rewrite")
        let delivered = try #require(try result.deliveryValue()["payload"]?.objectValue)
        #expect(delivered["pad"] == nil, "the original payload, without the extension's key")
        #expect(result.outputs.allSatisfy { OutputLimit.size(of: $0) <= Self.limit })

        // Under the limit, the same extension's content is delivered.
        let small = try await Fixture.dispatch(Self.padded(2_000), payload: Fixture.mutableAlert())
        #expect(small.disposition == .modified)
        #expect(small.reason == .extension)
    }

    @Test("a result's output bytes, which a worker holds until acknowledged, are its outputs' sizes: a delivery and its launch, a dead letter")
    func outputBytes() async throws {
        let launched = try await Fixture.dispatch(
            "apps: {com.example.app: {appDelegate: none}}",
            headers: [("apns-topic", "com.example.app.voip"), ("apns-push-type", "voip"), ("app-state", "notRunning")],
            payload: ["aps": [:], "caller": "Bob"])
        #expect(launched.outputs.count == 2, "a delivery and a launch")
        let deadLetter = try await Fixture.dispatch(
            headers: [("apns-topic", Fixture.bundleID), ("apns-priority", "7")], payload: Fixture.mutableAlert())
        #expect(deadLetter.deadLetter != nil && deadLetter.outputs.count == 1)
        for result in [launched, deadLetter] {
            #expect(result.outputBytes == result.outputs.reduce(0) { $0 + OutputLimit.size(of: $1) })
            #expect(result.outputBytes > result.outputs.reduce(0) { $0 + ($1.value?.count ?? 0) }, "framing, key and headers counted")
        }
    }

    @Test("a delivery that does not fit even with the original content becomes an OutputRejected dead letter")
    func originalTooLarge() async throws {
        let dispatcher = try Fixture.dispatcher(Fixture.appYAML(dispatch: "kafka:\n  maxMessageBytes: \(Self.limit)"))
        let traceparent = String(repeating: "0", count: 20_000)
        let record = TestRecord(
            headers: [("apns-topic", Fixture.bundleID), ("traceparent", traceparent)], payload: Fixture.mutableAlert()).requestRecord
        let result = await dispatcher.dispatch(record, appStates: NoAppStates(), receivedAt: Date())
        #expect(result.rejectionReason == .outputRejected)
        #expect(result.deadLetter?.rejection.status == 413)
        #expect(result.deadLetter?.rejection.detail.contains("kafka.maxMessageBytes") == true)
        let output = try #require(result.outputs.first)
        #expect(result.outputs.count == 1)
        #expect(OutputLimit.size(of: output) <= Self.limit, "the dead letter itself is cut to fit")
        #expect(result.header(DeadLetter.truncatedBytesHeader) != nil)
        #expect(result.header("traceparent") == nil, "the request's own headers go when even an empty value does not fit")
        #expect(result.header("apns-id") != nil)
    }

    @Test("a dead letter over the limit keeps the first bytes of the value and says how many were cut")
    func deadLetterCut() throws {
        var configuration = Configuration()
        configuration.kafka.maxMessageBytes = Self.limit
        let value = Array(repeating: UInt8(ascii: "x"), count: 50_000)
        let record = TestRecord(token: "not-a-token", value: value).requestRecord
        let deadLetter = DeadLetter(
            record: record, rejection: Rejection(.badDeviceToken, "bad"), failedAt: Date(), consumerGroup: "g")
        let limit = OutputLimit(maxRecordBytes: Self.limit)
        let fitted = deadLetter.outputRecord(topic: "dlq", limit: limit)
        #expect(OutputLimit.size(of: fitted) <= Self.limit)
        let kept = try #require(fitted.value)
        #expect(kept.count > Self.limit / 2, "as much of the value as fits is kept")
        #expect(kept.elementsEqual(value.prefix(kept.count)))
        let cut = fitted.headers.last { $0.name == DeadLetter.truncatedBytesHeader }?.value.map { String(decoding: $0, as: UTF8.self) }
        #expect(cut == String(value.count - kept.count))
        #expect(fitted.headers.contains { $0.name == "apns-topic" }, "the request's headers are kept")
        #expect(fitted.key == record.key)

        let minimal = deadLetter.outputRecord(topic: "dlq", limit: limit, extent: .minimal)
        #expect(minimal.value == [])
        #expect(!minimal.headers.contains { $0.name == "apns-topic" })
        #expect(minimal.headers.contains { $0.name == "dlq-reason" })

        // A dead letter that fits is written whole, without the header.
        let whole = deadLetter.outputRecord(topic: "dlq", limit: .default)
        #expect(whole.value == RecordBytes(value))
        #expect(!whole.headers.contains { $0.name == DeadLetter.truncatedBytesHeader })
    }

    @Test("a rejection's detail is cut by Unicode scalars and bytes, however the value is spelt")
    func detailIsBounded() async throws {
        // One Character of 300,000 combining marks.
        let value = "a" + String(repeating: "\u{0301}", count: 300_000)
        let dispatcher = try Fixture.dispatcher(Fixture.appYAML())
        let record = TestRecord(
            headers: [("apns-topic", Fixture.bundleID), ("apns-push-type", value)], payload: Fixture.mutableAlert()).requestRecord
        let result = await dispatcher.dispatch(record, appStates: NoAppStates(), receivedAt: Date())
        #expect(result.rejectionReason == .invalidPushType)
        let detail = try #require(result.deadLetter?.rejection.detail)
        #expect(detail.utf8.count <= Rejection.maximumDetailBytes)
        #expect(detail.unicodeScalars.count < 300, "the sentence and at most 64 scalars of the value")
        #expect(try #require(result.header("dlq-detail")).utf8.count <= Rejection.maximumDetailBytes)

        let long = Rejection(.badTopic, String(repeating: "é", count: 5_000))
        #expect(long.detail.utf8.count <= Rejection.maximumDetailBytes)
        #expect(long.detail.hasSuffix("…"))
    }
}
