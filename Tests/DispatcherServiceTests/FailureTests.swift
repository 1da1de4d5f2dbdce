import Foundation
import Kafka
import Records
import TestSupport
import Testing

/// The `serve` binary under crashes, rebalances, slow extensions and broker outages: nothing is
/// lost (at-least-once), and what is duplicated stays bounded.
@Suite("serve under failures", .serialized)
struct FailureTests {
    static let bundleID = EndToEndTests.bundleID
    /// Kinds that need no webhook: the runs are bounded by Kafka and the worker, not by a server.
    static let fastKinds: [TestRequest.Kind] = [.rewritten, .plainAlert, .silent, .badge, .voip, .badToken]

    @Test("kill -9 mid-run and restart: every request accounted for, duplicates only from what was uncommitted")
    func crashAndRestart() async throws {
        try await Pipeline.with(
            partitions: 24,
            dispatch: "  maxInFlight: 2000",
            apps: EndToEndTests.apps(webhookURL: "http://127.0.0.1:9/unused")
        ) { pipeline in
            let requests = TestRequest.mix(count: 50_000, devices: 1_000, bundleID: Self.bundleID, kinds: Self.fastKinds)
            // Produced first, so every request's partition and offset is known.
            let produced = try await pipeline.produce(requests)
            let first = try pipeline.startWorker("first")
            try await pipeline.outputs.waitFor(15_000, in: Pipeline.accountingTopics)
            first.send(signal: SIGKILL)
            _ = try await first.waitForExit()
            #expect(pipeline.outputs.count(Pipeline.accountingTopics) < requests.count, "the crash came mid-run")
            // The process is gone: these commits are final for the first worker.
            let committed = try await pipeline.committedOffsets()

            let second = try pipeline.startWorker("second")
            try await pipeline.outputs.waitForAll(Set(requests.map(\.apnsID)), in: Pipeline.accountingTopics)
            let outcomes = Outcomes(pipeline.outputs)
            #expect(Set(outcomes.countsByID.keys) == Set(requests.map(\.apnsID)))
            // Duplicates come only from what the first worker had taken but not committed: requests
            // at or past their partition's committed offset (in flight, or finished since the last
            // commit). A duplicate below it would mean a commit that lied, or work done twice.
            let duplicated = outcomes.countsByID.filter { $0.value > 1 }.map(\.key)
            let belowCommit = duplicated.filter { id in
                guard let position = produced.positions[id] else { return true }
                return position.offset < committed[position.partition, default: 0]
            }
            #expect(belowCommit.count == 0, "\(belowCommit.count) of \(duplicated.count) duplicates were committed before the crash")
            second.send(signal: SIGTERM)
            let exit = try await second.waitForExit()
            #expect(exit.exitedNormally && exit.status == 0)
        }
    }

    @Test("a second worker joins mid-run and the first leaves with SIGTERM: nothing lost, the survivor finishes")
    func rebalance() async throws {
        try await Pipeline.with(apps: EndToEndTests.apps(webhookURL: "http://127.0.0.1:9/unused")) { pipeline in
            let requests = TestRequest.mix(count: 30_000, devices: 600, bundleID: Self.bundleID, kinds: Self.fastKinds)
            let first = try pipeline.startWorker("first")
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Produced in slices over several seconds, so work remains when the group changes.
                group.addTask {
                    for slice in stride(from: 0, to: requests.count, by: 1_000) {
                        try await pipeline.produce(Array(requests[slice..<min(slice + 1_000, requests.count)]))
                        try await Task.sleep(for: .milliseconds(400))
                    }
                }
                try await pipeline.outputs.waitFor(3_000, in: Pipeline.accountingTopics)
                let second = try pipeline.startWorker("second")
                try await eventually("the second worker owns partitions", limit: .seconds(60)) {
                    pipeline.log(of: "second").contains("partitions assigned")
                }
                first.send(signal: SIGTERM)
                let firstExit = try await first.waitForExit(limit: .seconds(90))
                #expect(firstExit.exitedNormally && firstExit.status == 0, "first worker: \(pipeline.log(of: "first").suffix(1_500))")

                try await group.waitForAll()
                try await pipeline.outputs.waitForAll(Set(requests.map(\.apnsID)), in: Pipeline.accountingTopics)
                second.send(signal: SIGTERM)
                let secondExit = try await second.waitForExit(limit: .seconds(90))
                #expect(secondExit.exitedNormally && secondExit.status == 0)
            }
        }
    }

    @Test("webhooks taking 1 s each are called concurrently; all 2,000 requests are modified")
    func slowWebhooks() async throws {
        let webhook = WebhookServer()
        try await webhook.run(delay: .seconds(1)) { baseURL in
            try await Pipeline.with(apps: EndToEndTests.apps(webhookURL: baseURL + "/hook")) { pipeline in
                let requests = TestRequest.mix(count: 2_000, devices: 2_000, bundleID: Self.bundleID, kinds: [.webhook])
                try pipeline.startWorker("worker")
                try await pipeline.produce(requests)
                try await pipeline.outputs.waitForAll(Set(requests.map(\.apnsID)), in: [Pipeline.deliveries])
                let outcomes = Outcomes(pipeline.outputs)
                let reasons = Dictionary(grouping: requests) { outcomes.byID[$0.apnsID]?.reason ?? "none" }.mapValues(\.count)
                #expect(reasons == ["extension": requests.count])
                // Concurrency, not speed: one call at a time would mean 1; the worker had hundreds in
                // progress together (how many depends on how fast a loaded machine consumes the burst).
                #expect(webhook.mostInProgress >= 200, "at most \(webhook.mostInProgress) calls at once")
            }
        }
    }

    @Test("a backlog behind slow webhooks: maxInFlight bounds the calls in progress, within two consumer batches")
    func backlogStaysWithinMaxInFlight() async throws {
        let webhook = WebhookServer()
        try await webhook.run(delay: .milliseconds(500)) { baseURL in
            try await Pipeline.with(dispatch: "  maxInFlight: 200", apps: EndToEndTests.apps(webhookURL: baseURL + "/hook")) { pipeline in
                let requests = TestRequest.mix(count: 1_500, devices: 1_500, bundleID: Self.bundleID, kinds: [.webhook])
                // The whole backlog waits before the worker starts: its consumer can fetch it all at once.
                try await pipeline.produce(requests)
                try pipeline.startWorker("worker")
                try await pipeline.outputs.waitForAll(Set(requests.map(\.apnsID)), in: [Pipeline.deliveries])
                // Batches of a twentieth of the limit: the one that reached it and one more.
                #expect(webhook.mostInProgress <= 220, "\(webhook.mostInProgress) calls at once")
                #expect(webhook.mostInProgress >= 50, "the worker did call concurrently (\(webhook.mostInProgress) at most)")
            }
        }
    }

    @Test("a webhook that never answers: each request is delivered as original with extension-timeout")
    func webhookTimeout() async throws {
        let webhook = WebhookServer()
        try await webhook.run(delay: .zero) { baseURL in
            try await Pipeline.with(
                dispatch: "  expiryGrace: 100ms",
                apps: EndToEndTests.apps(webhookURL: baseURL + "/never", webhookDeadline: "300ms")
            ) { pipeline in
                let requests = TestRequest.mix(count: 300, devices: 300, bundleID: Self.bundleID, kinds: [.webhook])
                try pipeline.startWorker("worker")
                try await pipeline.produce(requests)
                try await pipeline.outputs.waitForAll(Set(requests.map(\.apnsID)), in: [Pipeline.deliveries])
                let outcomes = Outcomes(pipeline.outputs)
                let results = Dictionary(grouping: requests) { request in
                    outcomes.byID[request.apnsID].map { "\($0.disposition) \($0.reason)" } ?? "none"
                }.mapValues(\.count)
                #expect(results == ["original extension-timeout": requests.count])
                #expect(webhook.calls > 0, "the webhook was called")
            }
        }
    }

    @Test("a broker goes down for 5 s mid-run: the run completes with nothing lost")
    func brokerOutage() async throws {
        try await Pipeline.with(brokers: 3, apps: EndToEndTests.apps(webhookURL: "http://127.0.0.1:9/unused")) { pipeline in
            let requests = TestRequest.mix(count: 20_000, devices: 500, bundleID: Self.bundleID, kinds: Self.fastKinds)
            try pipeline.startWorker("worker")
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for slice in stride(from: 0, to: requests.count, by: 2_000) {
                        try await pipeline.produce(Array(requests[slice..<min(slice + 2_000, requests.count)]))
                    }
                }
                try await pipeline.outputs.waitFor(3_000, in: Pipeline.accountingTopics)
                // Broker 1 leads a third of every topic's partitions, requests and outputs alike.
                let cluster = try #require(pipeline.broker.embeddedCluster)
                try cluster.setBrokerDown(1)
                try await Task.sleep(for: .seconds(5))
                try cluster.setBrokerUp(1)
                try await group.waitForAll()
            }
            do {
                try await pipeline.outputs.waitForAll(Set(requests.map(\.apnsID)), in: Pipeline.accountingTopics)
            } catch {
                let missing = Set(requests.map(\.apnsID)).subtracting(pipeline.outputs.distinctIDs(Pipeline.accountingTopics))
                Issue.record("\(missing.count) requests unaccounted for; worker log: \(pipeline.log(of: "worker").suffix(3_000))")
                throw error
            }
            #expect(Set(Outcomes(pipeline.outputs).countsByID.keys) == Set(requests.map(\.apnsID)))
        }
    }
}
