import Dispatcher
import DispatcherService
import Foundation
import JSON
import Kafka
import Notifications
import Records
import TestSupport
import Testing

/// SEMANTICS sections 11 and 12 in the `serve` binary against the embedded broker: the devices
/// table read from its compacted topic, the token checks, the feedback topic, and 429.
@Suite("serve end to end: devices table, feedback, 429", .serialized)
struct TokensEndToEndTests {
    static let bundleID = "com.example.app"

    /// A request record for `token` with its own `apns-id`.
    static func request(_ token: String, id: Int) -> ProducerRecord {
        ProducerRecord(
            topic: Pipeline.requests, key: Array(token.utf8), value: Array(#"{"aps":{"alert":"hi"}}"#.utf8),
            headers: [
                RecordHeader(name: "apns-topic", value: bundleID),
                RecordHeader(name: "apns-id", value: String(format: "00000000-0000-4000-8000-%012d", id)),
            ])
    }

    @Test("devices records written before the start decide the token checks; each token dead letter is followed by its feedback record; the fourth request to a token in the window is TooManyRequests")
    func tokensFeedbackAndRate() async throws {
        let apps = """
              \(Self.bundleID):
                defaultAppState: background
            """
        try await Pipeline.with(partitions: 4, dispatch: "  tooManyRequests: {limit: 3, window: 1h}", apps: apps) { pipeline in
            let gone = String(repeating: "a1", count: 32)
            let other = String(repeating: "a2", count: 32)
            let sandbox = String(repeating: "a3", count: 32)
            let malformed = String(repeating: "a4", count: 32)
            let busy = String(repeating: "a5", count: 32)
            try await pipeline.writeDevice(#"{"token":"unregistered","since":1790000000000}"#, for: gone.uppercased())
            try await pipeline.writeDevice(#"{"bundleId":"com.example.other"}"#, for: other)
            try await pipeline.writeDevice(#"{"environment":"sandbox"}"#, for: sandbox)
            try await pipeline.writeDevice(#"{"token":"expired"}"#, for: malformed)
            try pipeline.startWorker("worker")

            var records = [Self.request(gone, id: 1), Self.request(other, id: 2), Self.request(sandbox, id: 3), Self.request(malformed, id: 4)]
            records += (5...8).map { Self.request(busy, id: $0) }
            for record in records { _ = try await pipeline.producer.send(record) }
            try await pipeline.outputs.waitFor(records.count, in: Pipeline.accountingTopics)
            try await pipeline.outputs.waitFor(3, in: [Pipeline.feedback])

            let reasons = Dictionary(
                uniqueKeysWithValues: pipeline.outputs.records(of: Pipeline.deadLetter).map {
                    ($0.header("apns-id") ?? "?", ($0.header("dlq-reason") ?? "?", $0.header("dlq-status") ?? "?"))
                })
            #expect(reasons["00000000-0000-4000-8000-000000000001"]?.0 == "Unregistered")
            #expect(reasons["00000000-0000-4000-8000-000000000001"]?.1 == "410")
            #expect(reasons["00000000-0000-4000-8000-000000000002"]?.0 == "DeviceTokenNotForTopic")
            #expect(reasons["00000000-0000-4000-8000-000000000003"]?.0 == "BadDeviceToken")
            #expect(reasons["00000000-0000-4000-8000-000000000008"]?.0 == "TooManyRequests")
            #expect(reasons["00000000-0000-4000-8000-000000000008"]?.1 == "429")
            #expect(reasons.count == 4)
            let unregistered = try #require(pipeline.outputs.records(of: Pipeline.deadLetter).first { $0.header("dlq-reason") == "Unregistered" })
            #expect(unregistered.header("dlq-timestamp") == "1790000000000")
            // The malformed devices record was logged and ignored: its token is delivered to.
            let delivered = Set(pipeline.outputs.records(of: Pipeline.deliveries).compactMap { $0.header("apns-id") })
            #expect(delivered == Set([4, 5, 6, 7].map { String(format: "00000000-0000-4000-8000-%012d", $0) }))
            #expect(pipeline.log(of: "worker").contains("devices record ignored"))

            let feedback = pipeline.outputs.records(of: Pipeline.feedback)
            #expect(feedback.count == 3)
            #expect(Set(feedback.compactMap { $0.json?["reason"]?.stringValue }) == ["Unregistered", "DeviceTokenNotForTopic", "BadDeviceToken"])
            let goneFeedback = try #require(feedback.first { $0.json?["reason"] == "Unregistered" })
            #expect(goneFeedback.key?.elementsEqual(gone.utf8) == true)
            #expect(goneFeedback.header("apns-id") == "00000000-0000-4000-8000-000000000001")
            #expect(goneFeedback.json?["timestamp"] == 1_790_000_000_000)
            #expect(goneFeedback.json?["status"] == 410)
            #expect(goneFeedback.json?["bundleId"] == .string(Self.bundleID))
        }
    }
}
