import Dispatcher
import DispatcherService
import Foundation
import JSON
import Kafka
import Notifications
import Records
import ServiceExtensions
import TestSupport
import Testing

/// SEMANTICS section 10 through `serve` on the embedded broker: requests and responses in one run,
/// every response accounted for as exactly one action record or dead letter, decided as offline,
/// launches where the table says, in device order, all committed.
@Suite("serve end to end: actions and responses", .serialized)
struct ResponsesEndToEndTests {
    /// A chat app whose two categories cover every row of the table.
    static let apps = """
          \(TestResponse.bundleID):
            defaultAppState: notRunning
            categories:
              MESSAGE:
                options: [customDismissAction]
                actions:
                  - {id: LIKE, title: Like}
                  - {id: REPLY, title: Reply, textInput: {buttonTitle: Send, placeholder: Message}}
                  - {id: OPEN, title: Open, options: [foreground]}
              VIDEO:
                actions: [{id: SAVE, title: Save}]
            contentExtensions:
              - {name: ChatThread, categories: MESSAGE, initialContentSizeRatio: 1, actionResponses: {LIKE: doNotDismiss, REPLY: dismissAndForwardAction}}
              - {name: Player, categories: VIDEO, initialContentSizeRatio: 0.5, mediaPlayPauseButton: default}
        """

    @Test("requests and responses in one run: one output each, decided as offline, in device order, all committed")
    func mixedRun() async throws {
        let pipeline = try Pipeline(apps: Self.apps)
        defer { Task { await pipeline.shutdown() } }
        let requests = TestRequest.mix(
            count: 2_000, devices: 150, bundleID: TestResponse.bundleID,
            kinds: TestRequest.Kind.allCases.filter { $0 != .webhook })
        let tokens = Array(Set(requests.map(\.token))).sorted()
        let responses = TestResponse.mix(count: 2_400, tokens: tokens)
        let worker = try pipeline.startWorker("worker")
        async let producedRequests = pipeline.produce(requests)
        async let producedResponses = pipeline.produce(responses)
        let (requestEnds, responseEnds) = try await (producedRequests.ends, producedResponses.ends)
        try await pipeline.outputs.waitFor(requests.count + responses.count, in: Pipeline.allAccountingTopics)

        // Every response: exactly one action record or dead letter, as the dispatcher decides offline.
        let expected = try await Self.decideOffline(responses, configPath: pipeline.configPath)
        // A launch is written after its action record, on its own topic: the count above can be
        // reached before the last launches are read, so wait for those the table gives.
        let launchesExpected = Set(expected.filter { $0.value.launch != nil }.keys)
        try await eventually("the \(launchesExpected.count) launches of responses read", limit: .seconds(60)) {
            launchesExpected.isSubset(of: pipeline.outputs.records(of: Pipeline.launches).compactMap { $0.header("traceparent") })
        }
        let served = Outcomes(pipeline.outputs, of: .responses)
        #expect(served.countsByID.count == responses.count)
        #expect(served.countsByID.values.allSatisfy { $0 == 1 })
        let mismatches = served.mismatches(responses.map { ($0.traceparent, $0.kind.rawValue) }, expected: expected)
        #expect(mismatches.count == 0, "\(mismatches.count) outcomes differ, e.g. \(mismatches.example)")
        // Every row was exercised, and launches are where the table says (compared above), once each.
        let reasons = Set(expected.values.map(\.reason))
        #expect(reasons.isSuperset(of: ActionReason.allCases.filter { $0 != .noHandler }.map(\.rawValue)))
        #expect(reasons.isSuperset(of: ["UnknownAction", "InvalidResponse", "BadDeviceToken"]))
        let launchTraces = pipeline.outputs.records(of: Pipeline.launches).compactMap { $0.header("traceparent") }
        #expect(Set(launchTraces).count == launchTraces.count)
        #expect(Set(launchTraces) == Set(expected.filter { $0.value.launch != nil }.keys))
        #expect(launchTraces.count > 0)
        // Each device's action records in the order of its responses.
        #expect(served.devicesOutOfOrder.isEmpty, "devices out of order, e.g. \(served.devicesOutOfOrder.first ?? "")")

        // The requests of the same run: one delivery or dead letter each.
        let requestOutcomes = Outcomes(pipeline.outputs)
        #expect(Set(requests.map(\.apnsID)).isSubset(of: requestOutcomes.countsByID.keys))
        #expect(requests.allSatisfy { requestOutcomes.countsByID[$0.apnsID] == 1 })

        // Both topics committed to their ends.
        try await eventually("offsets committed to the end of both topics", limit: .seconds(30)) {
            let requestsCommitted = try await pipeline.committedOffsets(of: Pipeline.requests)
            let responsesCommitted = try await pipeline.committedOffsets(of: Pipeline.responses)
            return requestsCommitted.filter { requestEnds[$0.key] != nil } == requestEnds
                && responsesCommitted.filter { responseEnds[$0.key] != nil } == responseEnds
        }
        worker.send(signal: SIGTERM)
        let exit = try await worker.waitForExit(limit: .seconds(60))
        #expect(exit.exitedNormally && exit.status == 0, "worker log: \(pipeline.log(of: "worker").suffix(2_000))")
    }

    @Test("send --response answers a delivery record piped in, and the worker hands it to the content extension")
    func sendResponse() async throws {
        let pipeline = try Pipeline(apps: Self.apps)
        defer { Task { await pipeline.shutdown() } }
        try pipeline.startWorker("worker")
        let token = String(repeating: "5e", count: 32)
        let sent = try await ChildProcess.run(
            try BuiltBinary.path(),
            ["send", "--bootstrap", pipeline.bootstrapServers, "--token", token, "--topic", TestResponse.bundleID],
            input: Data(#"{"aps":{"alert":{"title":"Anna","body":"Lunch?"},"category":"MESSAGE"}}"#.utf8))
        #expect(sent.status == 0)
        let apnsID = sent.output.trimmingCharacters(in: .whitespacesAndNewlines)
        try await pipeline.outputs.waitFor(1, in: [Pipeline.deliveries])
        let delivery = try #require(pipeline.outputs.records(of: Pipeline.deliveries).first?.value)

        let responses: [([String], String)] = [
            (["--response", "LIKE"], "doNotDismiss"),
            (["--response", "REPLY", "--text", "12:30?", "--header", "app-state=forceQuit"], "dismissAndForwardAction"),
        ]
        for (arguments, _) in responses {
            let answer = try await ChildProcess.run(
                try BuiltBinary.path(), ["send", "--bootstrap", pipeline.bootstrapServers] + arguments,
                input: Data(delivery))
            #expect(answer.status == 0, "\(answer.output)")
            #expect(answer.output.trimmingCharacters(in: .whitespacesAndNewlines) == apnsID)
        }
        try await pipeline.outputs.waitFor(responses.count, in: [Pipeline.actions])
        let actions = pipeline.outputs.records(of: Pipeline.actions)
        #expect(actions.map { $0.json?["responseOption"]?.stringValue } == responses.map(\.1))
        #expect(actions.allSatisfy { $0.header("apns-id") == apnsID && $0.key?.elementsEqual(token.utf8) == true })
        #expect(actions.last?.json?["userText"] == "12:30?")
        // The alert itself launched the app (notRunning by default), then the forwarded reply to the
        // force-quit app launches it again: wait for both, on the device's one partition in that order.
        try await pipeline.outputs.waitFor(2, in: [Pipeline.launches])
        let launches = pipeline.outputs.records(of: Pipeline.launches).compactMap(\.json)
        #expect(launches.map { $0["trigger"] } == ["userOpensNotification", "userSelectsBackgroundAction"])
        let launch = try #require(launches.last)
        #expect(JSONValue.object(launch)[path: ["launchOptions", "remoteNotification", "aps", "category"]] == "MESSAGE")
    }

    /// What the dispatcher decides for each response, offline, by `traceparent` (with the built-in
    /// extension kinds, so a configuration whose other apps use them loads too).
    static func decideOffline(_ responses: [TestResponse], configPath: String) async throws -> [String: Outcome] {
        let configuration = try Configuration(contentsOfFile: configPath, environment: [:])
        return try await BuiltInExtensions.withRegistry { registry in
            let dispatcher = try Dispatcher(configuration: configuration, registry: registry)
            var decided: [String: Outcome] = [:]
            for response in responses {
                // From offset 0 of partition 0 of the responses topic.
                decided[response.traceparent] = Outcome(
                    dispatcher.respond(response.record.requestRecord, appStates: AppStatesTable(), receivedAt: Date()))
            }
            return decided
        }
    }
}
