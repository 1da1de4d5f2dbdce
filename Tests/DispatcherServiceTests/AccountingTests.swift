import Testing
import TestSupport

/// How the end-to-end and real-broker tests count outputs (`Accounting`): the "strangers" the
/// real-broker suite once counted (docs/testing.md, "The strangers of the real-broker suite").
@Suite("Accounting of outputs", .serialized)
struct AccountingTests {
    @Test("outputs read after the count is taken are duplicates, never strangers; the old count, a later total less an earlier tally, called them strangers")
    func lateOutputsAreNotStrangers() async throws {
        try await Pipeline.with(partitions: 4, apps: EndToEndTests.apps(webhookURL: "http://127.0.0.1:9/unused")) { pipeline in
            let requests = TestRequest.mix(count: 300, devices: 30, bundleID: EndToEndTests.bundleID, kinds: RealBrokerTests.fastKinds)
            try pipeline.startWorker("worker")
            try await pipeline.produce(requests)
            try await pipeline.waitForEveryOutput(requests: requests, workers: ["worker"])
            let first = Accounting(pipeline.outputs, requests: requests)
            #expect(first.lost.isEmpty && first.duplicates == 0 && first.strangers == 0, "\(first)")
            // What a partition's new owner does after a rebalance: it reads again what the old
            // owner had not committed and writes those outputs again, with the same apns-id.
            try await pipeline.produce(requests)
            try await pipeline.outputs.waitFor(2 * requests.count, in: Pipeline.allAccountingTopics)
            // The count before a38b357 took two readings of the live reader: the outputs it could
            // match (an earlier reading), subtracted from the total (a later one). Everything read
            // in between was a "stranger": here, the outputs written again.
            let matchedEarlier = first.sent - first.lost.count + first.duplicateOutputs
            let oldStrangers = pipeline.outputs.count(Pipeline.allAccountingTopics) - matchedEarlier
            #expect(oldStrangers == requests.count)
            // Today each record is matched from the one reading it is counted in.
            let second = Accounting(pipeline.outputs, requests: requests)
            #expect(second.strangers == 0, "\(second.strangerExamples.prefix(3))")
            #expect(second.lost.isEmpty)
            #expect(second.duplicateOutputs == requests.count, "\(second)")
        }
    }
}
