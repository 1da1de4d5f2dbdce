import Dispatcher
import Foundation
import JSON
import Notifications
import Records
import TestSupport
import Testing

/// SEMANTICS section 10 offline: the `dispatch` command (the built binary) reads a response
/// wherever a line's `topic` is the responses topic.
@Suite("dispatch command: actions and responses (built binary)")
struct ResponsesDispatchCommandTests {
    static let root = DispatchCommandTests.packageRoot

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// One output line in short: the topic's last word, then what decides it.
    static func summary(_ record: JSONObject) -> String {
        let value = record["value"]?.objectValue
        switch record["topic"]?.stringValue {
        case "notifications.actions":
            let fields = ["handledBy", "reason", "responseOption", "appCallback"].map { value?[$0]?.stringValue ?? "-" }
            return "action " + fields.joined(separator: " ")
        case "notifications.launches":
            return "launch " + (value?["trigger"]?.stringValue ?? "?")
        case "notifications.deliveries":
            return "delivery " + (value?["reason"]?.stringValue ?? "?")
        default:
            return "dead-letter " + (record["headers"]?[path: ["dlq-reason"]]?.stringValue ?? "?")
        }
    }

    @Test("Config/samples/responses.jsonl: every row of the table, in input order, launches after their action")
    func everyRow() async throws {
        let run = try await DispatchCommandTests.run([
            "dispatch", "--config", Self.path("Config/dispatcher.yaml"), "--input", Self.path("Config/samples/responses.jsonl"),
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        let unc = "userNotificationCenter(_:didReceive:withCompletionHandler:)"
        #expect(
            records.map(Self.summary) == [
                "action contentExtension media-control - -",
                "action contentExtension media-control - -",
                "action none dismiss-not-reported - -",
                "action contentExtension content-extension doNotDismiss -",
                "action contentExtension content-extension dismissAndForwardAction \(unc)",
                "launch userSelectsBackgroundAction",
                "action contentExtension content-extension dismissAndForwardAction \(unc)",
                "action app delivered-to-app - \(unc)",
                "launch userOpensNotification",
                "action app delivered-to-app - \(unc)",
                "action app delivered-to-app - \(unc)",
                "launch userSelectsBackgroundAction",
                "action app delivered-to-app - \(unc)",
                "action app delivered-to-app - application(_:handleActionWithIdentifier:forRemoteNotification:withResponseInfo:completionHandler:)",
                "launch userSelectsBackgroundAction",
                "action app no-handler - -",
                "launch userOpensNotification",
                "dead-letter UnknownAction",
                "dead-letter UnknownAction",
                "dead-letter UnknownAction",
                "dead-letter InvalidResponse",
                "dead-letter BadTopic",
            ])
        // The first: the media button of NewsPreview, every field of the record.
        let first = try #require(records.first)
        #expect(first["key"] == .string(String(repeating: "0a", count: 32)))
        #expect(first["headers"] == ["apns-id": "6f1c2a3e-0000-4000-8000-000000000101"])
        let value = try #require(first["value"]?.objectValue)
        #expect(
            value.keys == [
                "apnsId", "deviceToken", "bundleId", "category", "actionIdentifier", "mediaCommand", "userText",
                "actionOptions", "handledBy", "contentExtension", "extensionCallback", "responseOption",
                "interfaceDismissed", "forwardedToApp", "appCallback", "opensApp", "reason", "appState", "receivedAt",
            ])
        #expect(value["contentExtension"] == "NewsPreview")
        #expect(value["extensionCallback"] == "mediaPlay()")
        #expect(value["mediaCommand"] == "play")
        #expect(value["actionIdentifier"] == .null)
        #expect(value["interfaceDismissed"] == false)
        // The reply carries its text and the traceparent it came with goes to the LIKE's record.
        #expect(records[3]["headers"]?[path: ["traceparent"]] == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        #expect(records[4]["value"]?[path: ["userText"]] == "Sure, 12:30?")
        #expect(records[5]["value"]?[path: ["launchOptions", "remoteNotification", "threadId"]] == "t-9")
        // Dead letters name their source: the responses topic, partition 0, the line's offset.
        let letters = records.filter { $0["topic"] == "notifications.dead-letter" }
        #expect(letters.map { $0["headers"]?[path: ["dlq-source-topic"]] } == Array(repeating: "notifications.responses", count: 5))
        #expect(letters.map { $0["headers"]?[path: ["dlq-source-offset"]] } == ["12", "13", "14", "15", "16"])
        let derived = MessageID.derived(for: TopicPartitionOffset(topic: "notifications.responses", partition: 0, offset: 12))
        #expect(letters.first?["headers"]?[path: ["apns-id"]] == .string(derived.description))
    }

    @Test("the legacy profile: show-view false means no View button, so no launch and no default action")
    func showView() async throws {
        let run = try await DispatchCommandTests.run([
            "dispatch", "--config", Self.path("Config/examples/legacy.yaml"), "--input", Self.path("Config/examples/legacy.jsonl"),
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let legacy = "application(_:didReceiveRemoteNotification:)"
        #expect(
            try run.records().map(Self.summary) == [
                "delivery legacy-profile",  // show-view false, notRunning: no launch
                "delivery legacy-profile",  // show-view true
                "launch userOpensNotification",
                "delivery legacy-profile",  // forceQuit, plain alert
                "launch userOpensNotification",
                "delivery legacy-profile",  // show-view false, forceQuit: no launch
                "action app delivered-to-app - \(legacy)",  // the default action follows the foreground row
                "launch userOpensNotification",
                "action app delivered-to-app - \(legacy)",  // the app's defaultAppState: foreground
                "dead-letter UnknownAction",  // the default action of an alert without View button
                "dead-letter UnknownAction",  // a custom action
                "dead-letter UnknownAction",  // a dismissal
            ])
    }

    @Test("requests and responses interleaved on standard input: outputs in input order")
    func interleaved() async throws {
        let token = String(repeating: "cd", count: 32)
        let input = """
            {"key": "\(token)", "headers": {"apns-topic": "com.example.chat", "apns-id": "6f1c2a3e-0000-4000-8000-000000000301"}, "value": {"aps": {"alert": "Lunch?", "category": "MESSAGE"}}}
            {"topic": "notifications.responses", "key": "\(token)", "headers": {"apns-topic": "com.example.chat"}, "value": {"notification": {"apnsId": "6f1c2a3e-0000-4000-8000-000000000301", "payload": {"aps": {"alert": "Lunch?", "category": "MESSAGE"}}}, "actionIdentifier": "LIKE"}}
            {"topic": "notifications.requests", "key": "\(token)", "headers": {"apns-topic": "com.example.chat"}, "value": {"aps": {"alert": "Still there?"}}}
            {"topic": "notifications.responses", "key": "\(token)", "headers": {"apns-topic": "com.example.chat"}, "rawValue": "not json"}
            """
        let run = try await DispatchCommandTests.run(["dispatch", "--config", Self.path("Config/dispatcher.yaml")], input: input)
        #expect(run.status == 0, "\(run.stderr)")
        let records = try run.records()
        #expect(
            records.map(Self.summary) == [
                "delivery not-mutable", "launch userOpensNotification", "action contentExtension content-extension doNotDismiss -",
                "delivery not-mutable", "launch userOpensNotification", "dead-letter InvalidResponse",
            ])
        #expect(records[0]["value"]?[path: ["presentation", "contentExtension"]] == "ChatThread")
        #expect(records.last?["rawValue"] == "not json")
    }
}
