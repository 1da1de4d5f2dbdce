import Dispatcher
import DispatcherService
import Foundation
import Kafka
import Notifications
import Records
import ServiceExtensions
import TestSupport
import Testing

/// The `serve` binary against the embedded broker: every request ends as exactly one delivery or
/// dead letter, decided as the dispatcher decides offline.
@Suite("serve end to end", .serialized)
struct EndToEndTests {
    static let bundleID = "com.example.app"

    static func apps(webhookURL: String, webhookDeadline: String = "30s") -> String {
        """
          \(bundleID):
            defaultAppState: notRunning
            serviceExtension:
              kind: rewrite
              set:
                aps.alert.subtitle: "rewritten {{ aps.alert.title }}"
            categories:
              SLOW:
                deadline: \(webhookDeadline)
                serviceExtension:
                  kind: webhook
                  url: \(webhookURL)
        """
    }

    @Test("20,000 requests of every kind: one output each, decided as offline, in device order, all committed")
    func mixedRun() async throws {
        let webhook = WebhookServer()
        try await webhook.run(delay: .milliseconds(20)) { baseURL in
            try await Pipeline.with(apps: Self.apps(webhookURL: baseURL + "/hook")) { pipeline in
                let requests = TestRequest.mix(
                    count: 20_000, devices: 300, bundleID: Self.bundleID, kinds: TestRequest.Kind.allCases)
                let worker = try pipeline.startWorker("worker")
                let ends = try await pipeline.produce(requests).ends
                try await pipeline.waitForEveryOutput(requests: requests, workers: ["worker"])
                #expect(webhook.calls == requests.filter { $0.kind == .webhook }.count)

                let expected = try await Self.decideOffline(requests, configPath: pipeline.configPath)
                let outcomes = Outcomes(pipeline.outputs)
                // Exactly one delivery or dead letter per request, none for anything else.
                #expect(outcomes.countsByID.count == requests.count)
                #expect(outcomes.countsByID.values.allSatisfy { $0 == 1 })
                let mismatches = outcomes.mismatches(requests.map { ($0.apnsID, $0.kind.rawValue) }, expected: expected)
                #expect(mismatches.count == 0, "\(mismatches.count) outcomes differ, e.g. \(mismatches.example)")
                // Launches where the rules say (compared above through each outcome), each once.
                let launchIDs = pipeline.outputs.records(of: Pipeline.launches).compactMap { $0.header("apns-id") }
                #expect(Set(launchIDs).count == launchIDs.count)
                #expect(Set(launchIDs) == Set(expected.filter { $0.value.launch != nil }.keys))
                // Per-device order on the deliveries topic.
                #expect(outcomes.devicesOutOfOrder.count == 0, "devices out of order, e.g. \(outcomes.devicesOutOfOrder.first ?? "")")
                // Everything committed: the group's offsets reach the end of every partition.
                try await eventually("offsets committed to the end", limit: .seconds(30)) {
                    try await pipeline.committedOffsets().filter { ends[$0.key] != nil } == ends
                }
                worker.send(signal: SIGTERM)
                let exit = try await worker.waitForExit(limit: .seconds(60))
                #expect(exit.exitedNormally && exit.status == 0, "worker log: \(pipeline.log(of: "worker").suffix(2_000))")
            }
        }
    }

    @Test(
        "a backlog of a few devices' requests: most start behind their device's earlier ones (pipelined), yet each device's deliveries and launches land in its order, each once"
    )
    func pipelinedBacklog() async throws {
        try await Pipeline.with(apps: Self.apps(webhookURL: "http://127.0.0.1:9/unused")) { pipeline in
            // Most alerts write one output each and keep their device's key open; a silent push
            // launches the app (not running), so its launch follows its delivery and
            // closes the key; a bad priority is a dead letter.
            let requests = TestRequest.mix(
                count: 3_000, devices: 12, bundleID: Self.bundleID, kinds: [.plainAlert, .badge, .plainAlert, .silent, .badPriority])
            // Written before the worker starts: its batches hold many requests of each device.
            _ = try await pipeline.produce(requests)
            let worker = try pipeline.startWorker("worker")
            let endpoint = try await OperationsTests.endpoint(of: "worker", in: pipeline)
            try await pipeline.waitForEveryOutput(requests: requests, workers: ["worker"])

            let outcomes = Outcomes(pipeline.outputs)
            #expect(outcomes.countsByID.count == requests.count)
            #expect(outcomes.countsByID.values.allSatisfy { $0 == 1 })
            #expect(outcomes.devicesOutOfOrder.isEmpty, "devices out of order, e.g. \(outcomes.devicesOutOfOrder.first ?? "")")
            // Each launch once, and each device's launches in the order of its requests.
            let requestsByID = Dictionary(uniqueKeysWithValues: requests.map { ($0.apnsID, $0) })
            var lastLaunch: [String: Int] = [:]
            var launchesOutOfOrder: Set<String> = []
            let launchIDs = pipeline.outputs.records(of: Pipeline.launches).compactMap { $0.header("apns-id") }
            for id in launchIDs {
                guard let request = requestsByID[id] else { continue }
                if let last = lastLaunch[request.token], request.sequence <= last { launchesOutOfOrder.insert(request.token) }
                lastLaunch[request.token] = request.sequence
            }
            let silentLaunches = launchIDs.filter { requestsByID[$0]?.kind == .silent }.count
            #expect(silentLaunches == requests.filter { $0.kind == .silent }.count, "every silent push launches the app")
            #expect(launchIDs.count == Set(launchIDs).count)
            #expect(launchesOutOfOrder.isEmpty, "launches out of order for \(launchesOutOfOrder.sorted())")
            // Pipelined: started behind running requests of their device, not copied to wait.
            let pipelined = try await endpoint.scrape()["\(OperationsTests.prefix)_records_pipelined_total"]
            #expect(pipelined > 0 && pipelined < Double(requests.count), "\(pipelined) requests pipelined")

            worker.send(signal: SIGTERM)
            let exit = try await worker.waitForExit(limit: .seconds(60))
            #expect(exit.exitedNormally && exit.status == 0, "worker log: \(pipeline.log(of: "worker").suffix(2_000))")
        }
    }

    @Test("garbage, huge values, missing headers and tombstones become dead letters; the worker keeps going")
    func badInput() async throws {
        try await Pipeline.with(apps: Self.apps(webhookURL: "http://127.0.0.1:9/unused")) { pipeline in
            let token = String(repeating: "ab", count: 32)
            let cases: [(String, ProducerRecord)] = [
                ("InvalidPayload", ProducerRecord(topic: Pipeline.requests, key: Array(token.utf8), value: [0xff, 0x00, 0x13], headers: [RecordHeader(name: "apns-topic", value: Self.bundleID)])),
                ("PayloadTooLarge", ProducerRecord(topic: Pipeline.requests, key: Array(token.utf8), value: Array(repeating: UInt8(ascii: "x"), count: 200_000), headers: [RecordHeader(name: "apns-topic", value: Self.bundleID)])),
                ("MissingTopic", ProducerRecord(topic: Pipeline.requests, key: Array(token.utf8), value: Array(#"{"aps":{"alert":"x"}}"#.utf8), headers: [])),
                ("PayloadEmpty", ProducerRecord(topic: Pipeline.requests, key: Array(token.utf8), value: nil, headers: [RecordHeader(name: "apns-topic", value: Self.bundleID)])),
                ("MissingDeviceToken", ProducerRecord(topic: Pipeline.requests, key: nil, value: Array(#"{"aps":{"alert":"x"}}"#.utf8), headers: [RecordHeader(name: "apns-topic", value: Self.bundleID)])),
            ]
            try pipeline.startWorker("worker")
            for (_, record) in cases { _ = try await pipeline.producer.send(record) }
            // A valid request after the bad ones is still delivered.
            let valid = TestRequest.make(.plainAlert, bundleID: Self.bundleID, token: token, sequence: 0)
            try await pipeline.produce([valid])
            try await pipeline.outputs.waitFor(cases.count + 1, in: Pipeline.accountingTopics)

            let deadLetters = pipeline.outputs.records(of: Pipeline.deadLetter)
            #expect(deadLetters.compactMap { $0.header("dlq-reason") }.sorted() == cases.map(\.0).sorted())
            for letter in deadLetters {
                #expect(letter.header("dlq-detail")?.isEmpty == false)
                #expect(letter.header("dlq-consumer-group") == pipeline.group)
                #expect(letter.header("apns-id") != nil, "a derived apns-id is added")
            }
            let tooLarge = try #require(deadLetters.first { $0.header("dlq-reason") == "PayloadTooLarge" })
            #expect(tooLarge.value?.count == 200_000, "the value is kept unchanged")
            #expect(tooLarge.header("dlq-status") == "413")
            let deliveries = pipeline.outputs.records(of: Pipeline.deliveries)
            #expect(deliveries.map { $0.header("apns-id") } == [valid.apnsID])
        }
    }

    @Test("a state on the app-states topic changes the next delivery's appState, callback and launch")
    func appStates() async throws {
        try await Pipeline.with(apps: Self.apps(webhookURL: "http://127.0.0.1:9/unused")) { pipeline in
            let token = String(repeating: "cd", count: 32)
            try pipeline.startWorker("worker")

            // No state known: the app's defaultAppState (notRunning) applies, so a silent push launches it.
            let before = TestRequest.make(.silent, bundleID: Self.bundleID, token: token, sequence: 0)
            try await pipeline.produce([before])
            try await pipeline.outputs.waitFor(1, in: [Pipeline.deliveries])
            try await pipeline.outputs.waitFor(1, in: [Pipeline.launches])
            let first = try #require(Outcomes(pipeline.outputs).byID[before.apnsID])
            #expect(first.appState == "notRunning")
            #expect(first.launch == "backgroundDelivery")

            // The state arrives through the compacted topic.
            try await pipeline.writeAppState("foreground", for: token)
            var sequence = try await Self.probe(pipeline, token: token, from: 1, until: "foreground")
            let after = TestRequest.make(.silent, bundleID: Self.bundleID, token: token, sequence: sequence)
            try await pipeline.produce([after])
            sequence += 1
            try await pipeline.outputs.waitFor(sequence, in: [Pipeline.deliveries])
            let last = try #require(Outcomes(pipeline.outputs).byID[after.apnsID])
            #expect(last.appState == "foreground")
            #expect(last.callback == "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)")
            #expect(last.launch == nil)

            // A tombstone deletes the state: back to the app's default.
            try await pipeline.writeAppState(nil, for: token)
            _ = try await Self.probe(pipeline, token: token, from: sequence, until: "notRunning")
        }
    }

    /// Sends silent pushes for `token`, numbered from `first`, until one is delivered with
    /// `appState` (the worker follows the app-states topic while running, so a state takes effect
    /// once it has read it); returns the next number to use.
    static func probe(_ pipeline: Pipeline, token: String, from first: Int, until appState: String) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(60)
        var sequence = first
        while ContinuousClock.now < deadline {
            let probe = TestRequest.make(.silent, bundleID: bundleID, token: token, sequence: sequence)
            sequence += 1
            try await pipeline.produce([probe])
            try await pipeline.outputs.waitFor(sequence, in: [Pipeline.deliveries])
            if Outcomes(pipeline.outputs).byID[probe.apnsID]?.appState == appState { return sequence }
        }
        throw TimedOut(what: "a delivery decided with app state \(appState)")
    }

    /// What the dispatcher decides for each request, offline, with the pipeline's configuration.
    static func decideOffline(_ requests: [TestRequest], configPath: String) async throws -> [String: Outcome] {
        let configuration = try Configuration(contentsOfFile: configPath, environment: [:])
        return try await BuiltInExtensions.withRegistry { registry in
            let dispatcher = try Dispatcher(configuration: configuration, registry: registry)
            // Concurrently (the webhook requests take their time each), but bounded: thousands of
            // simultaneous connects would overflow the loopback server's accept backlog.
            return await withTaskGroup(of: (String, Outcome).self) { group in
                var decided: [String: Outcome] = [:]
                for (index, request) in requests.enumerated() {
                    if index >= 64, let (id, outcome) = await group.next() { decided[id] = outcome }
                    group.addTask {
                        // From offset 0 of partition 0 of the requests topic.
                        let result = await dispatcher.dispatch(request.record.requestRecord, appStates: AppStatesTable(), receivedAt: Date())
                        return (request.apnsID, Outcome(result))
                    }
                }
                for await (id, outcome) in group { decided[id] = outcome }
                return decided
            }
        }
    }
}
