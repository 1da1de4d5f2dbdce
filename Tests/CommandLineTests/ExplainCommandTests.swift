import Dispatcher
import DispatcherTools
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// `explain` and `dispatch --lint` through the built binary, as a user runs them.
@Suite("explain command (built binary)")
struct ExplainCommandTests {
    static let root = BuiltBinary.packageRoot()
    static let config = root.appendingPathComponent("Config/dispatcher.yaml").path
    static let samples = root.appendingPathComponent("Config/samples")

    /// Runs the binary, with the package root as the working folder unless `directory` is given.
    static func run(_ arguments: [String], input: String = "", in directory: URL? = nil) async throws -> BuiltBinary.Run {
        try await BuiltBinary.run(arguments, input: input, in: directory)
    }

    /// A record of `dispatch`'s or `explain`'s output without what differs from run to run: the
    /// times, the extension's elapsed time and the dead letter's failure time.
    static func stable(_ record: JSONValue) -> JSONValue {
        guard var object = record.objectValue else { return record }
        if var value = object["value"]?.objectValue {
            value["receivedAt"] = nil
            value["deliveredAt"] = nil
            value["reportedAt"] = nil
            if var report = value["extension"]?.objectValue {
                report["elapsedMs"] = nil
                value["extension"] = .object(report)
            }
            object["value"] = .object(value)
        }
        if var headers = object["headers"]?.objectValue {
            headers["dlq-failed-at"] = nil
            object["headers"] = .object(headers)
        }
        return .object(object)
    }

    @Test("every record of every sample: explain's outcome and outputs are dispatch's")
    func agreesWithDispatch() async throws {
        var compared = 0
        var actions = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.samples.path).sorted() where name.hasSuffix(".jsonl") {
            let file = Self.samples.appendingPathComponent(name).path
            let dispatched = try await Self.run(["dispatch", "--config", Self.config, "--input", file])
            try #require(dispatched.status == 0, "\(name): \(dispatched.standardError)")
            var remaining = try dispatched.standardOutput.split(separator: "\n").map { try JSONValue(parsing: Array($0.utf8)) }[...]
            let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() where !JSONLines.isBlank(Array(line.utf8)) {
                let explained = try await Self.run(["explain", "--config", Self.config, "--json", "--line", "\(index + 1)", file])
                try #require(explained.status == 0, "\(name):\(index + 1): \(explained.standardError)")
                let json = try JSONValue(parsing: Array(explained.standardOutput.utf8))
                let outputs = try #require(json[path: ["outputs"]]?.arrayValue)
                // A state-table record updates its table for the lines after it and writes nothing
                // (SEMANTICS 11.2), but for a devices record that brings a device back online,
                // which delivers what was stored for it (16.3).
                if ["devices", "channels", "badges"].contains(where: { line.contains(#""topic":"notifications.\#($0)""#) }) {
                    #expect(json[path: ["input", "record"]] == "state-table", "\(name):\(index + 1)")
                    #expect(json[path: ["outcome", "table"]] == "updated", "\(name):\(index + 1)")
                    let expected = remaining.prefix(outputs.count)
                    remaining = remaining.dropFirst(outputs.count)
                    #expect(outputs.map(Self.stable) == expected.map(Self.stable), "\(name):\(index + 1)")
                    continue
                }
                // A valid broadcast that no activity subscribes to writes nothing (section 15).
                if outputs.isEmpty, json[path: ["outcome", "kind"]] == "broadcast" { continue }
                try #require(!outputs.isEmpty && remaining.count >= outputs.count, "\(name):\(index + 1)")
                let expected = remaining.prefix(outputs.count)
                remaining = remaining.dropFirst(outputs.count)
                #expect(outputs.map(Self.stable) == expected.map(Self.stable), "\(name):\(index + 1)")
                // The outcome matches the primary record: the delivery's disposition and reason, the
                // action record's handler and reason, or the dead letter's reason.
                let primary = try #require(expected.first)
                switch primary[path: ["topic"]]?.stringValue {
                case "notifications.dead-letter":
                    #expect(json[path: ["outcome", "reason"]] == primary[path: ["headers", "dlq-reason"]], "\(name):\(index + 1)")
                case "notifications.actions":
                    actions += 1
                    #expect(json[path: ["input", "record"]] == "response", "\(name):\(index + 1)")
                    for field in ["handledBy", "reason", "responseOption", "appCallback", "forwardedToApp", "opensApp", "interfaceDismissed"] {
                        #expect(json[path: ["outcome", field]] == primary[path: ["value", field]], "\(name):\(index + 1): \(field)")
                    }
                case _ where json[path: ["outcome", "kind"]] == "broadcast":
                    // One delivery per subscribed activity (section 15), each with its result.
                    let deliveries = expected.filter { $0[path: ["topic"]] == "notifications.deliveries" }
                    #expect(json[path: ["outcome", "activities"]] == .number(JSONNumber(deliveries.count)), "\(name):\(index + 1)")
                case _ where json[path: ["outcome", "kind"]] == "stored":
                    // Stored for an offline device (section 16.1), after the delivery of the one it replaced, if any.
                    #expect(expected.last?[path: ["topic"]] == "notifications.stored", "\(name):\(index + 1)")
                    let replaced = expected.count > 1 ? primary[path: ["value", "reason"]] : JSONValue.null
                    #expect(json[path: ["outcome", "replaced"]] == replaced, "\(name):\(index + 1)")
                default:
                    #expect(json[path: ["outcome", "disposition"]] == primary[path: ["value", "disposition"]], "\(name):\(index + 1)")
                    #expect(json[path: ["outcome", "reason"]] == primary[path: ["value", "reason"]], "\(name):\(index + 1)")
                }
                // The records the input line says it is: a response where its topic is the responses topic.
                let isResponse = line.contains(#""topic":"notifications.responses""#)
                #expect(json[path: ["input", "record"]] == (isResponse ? "response" : "request"), "\(name):\(index + 1)")
                compared += 1
            }
            #expect(remaining.isEmpty, "\(name): dispatch wrote records explain did not")
        }
        #expect(compared >= 60)
        #expect(actions >= 12)
    }

    @Test("a service extension that did not run, for a person: the rule that decided and Apple's sentence")
    func textForNotMutable() async throws {
        let run = try await Self.run(["explain", "--config", Self.config, "--line", "4", Self.samples.appendingPathComponent("alerts.jsonl").path])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("Explaining line 4 of "))
        #expect(run.standardOutput.contains("Outcome: Delivered as sent (original) (reason not-mutable)"))
        #expect(run.standardOutput.contains("→ 4. not-mutable: applies, aps.mutable-content is not 1"))
        #expect(run.standardOutput.contains("“The remote notification’s aps dictionary includes the mutable-content key"))
        #expect(run.standardError.isEmpty)
    }

    @Test("a response line, for a person: the row that decided, the rows before it, the content extension's answer, Apple's sentence")
    func textForResponse() async throws {
        let run = try await Self.run(["explain", "--config", Self.config, "--line", "5", Self.samples.appendingPathComponent("responses.jsonl").path])
        #expect(run.status == 0, "\(run.standardError)")
        let text = run.standardOutput
        #expect(text.hasPrefix("Explaining line 5 of "))
        #expect(text.contains(" (a JSON-lines response record)\n"))
        #expect(text.contains("Outcome: Handled by the content extension ChatThread (reason content-extension)"))
        #expect(text.contains("1. Validation: passed all 7 checks"))
        #expect(text.contains("3. Who handles it: row 3 decides: handled by the content extension ChatThread"))
        #expect(text.contains("   ✓ 2. a dismissal, category without customDismissAction: does not match, the response is not a"))
        #expect(text.contains("   → it answers dismissAndForwardAction: actionResponses.REPLY"))
        #expect(text.contains("“If your view controller implements the optional didReceive(_:completionHandler:) method"))
        #expect(text.contains("— Apple, UNNotificationContentExtension <https://developer.apple.com/"))
        #expect(text.contains("   → app state notRunning: launched, userSelectsBackgroundAction"))
        #expect(text.contains("Lint: not applicable"))
        #expect(run.standardError.isEmpty)
    }

    @Test("a response value on standard input: read as a response, the flags set its headers and key")
    func responseValueOnStandardInput() async throws {
        let value = #"{"notification":{"apnsId":"6f1c2a3e-0000-4000-8000-000000000104","payload":{"aps":{"alert":"Missed call","category":"MISSED_CALL"}}},"actionIdentifier":"TEXT_BACK","userText":"Later"}"#
        let token = String(repeating: "9f", count: 32)
        let run = try await Self.run(
            ["explain", "--config", Self.config, "--json", "--topic", "com.example.phone", "--app-state", "foreground", "--token", token],
            input: value)
        #expect(run.status == 0, "\(run.standardError)")
        let json = try JSONValue(parsing: Array(run.standardOutput.utf8))
        #expect(json[path: ["input", "format"]] == "response")
        #expect(json[path: ["input", "record"]] == "response")
        #expect(json[path: ["outcome", "kind"]] == "action")
        #expect(json[path: ["outcome", "row"]] == 4)
        #expect(json[path: ["outcome", "appCallback"]] == .string(AppCallback.handleActionWithResponseInfo.rawValue))
        let steps = try #require(json[path: ["steps"]]?.arrayValue)
        #expect(steps.compactMap { $0[path: ["step"]]?.stringValue } == ["validation", "app-state", "response-handling", "app-side"])
        let appSide = try #require(steps.last)
        #expect(appSide[path: ["facts", "appCallbackRule"]] == "actionHandler")
        #expect(appSide[path: ["lines"]]?.arrayValue?.contains { $0[path: ["text"]]?.stringValue?.contains("UIUserNotificationActionResponseTypedTextKey") == true } == true)
        let action = try #require(json[path: ["outputs"]]?.arrayValue?.first)
        #expect(action[path: ["topic"]] == "notifications.actions")
        #expect(action[path: ["key"]] == .string(token))
        #expect(action[path: ["value", "userText"]] == "Later")
        // Without --topic the response has no apns-topic: the first check that fails is the topic's.
        let untargeted = try await Self.run(["explain", "--config", Self.config, "--json"], input: value)
        let untargetedJSON = try JSONValue(parsing: Array(untargeted.standardOutput.utf8))
        #expect(untargetedJSON[path: ["outcome", "reason"]] == "MissingTopic")
        #expect(untargetedJSON[path: ["steps"]]?.arrayValue?.first?[path: ["facts", "failedCheck"]] == "topic-present")
    }

    @Test("an .apns file: the bundle ID from \"Simulator Target Bundle\", removed from the payload, and a stand-in token")
    func apnsFile() async throws {
        let file = Self.root.appendingPathComponent("Config/examples/news-alert.apns").path
        let run = try await Self.run(["explain", "--config", Self.config, "--json", file])
        #expect(run.status == 0, "\(run.standardError)")
        let json = try JSONValue(parsing: Array(run.standardOutput.utf8))
        #expect(json[path: ["input", "format"]] == "apns")
        #expect(json[path: ["outcome", "reason"]] == "extension")
        let delivery = try #require(json[path: ["outputs"]]?.arrayValue?.first)
        #expect(delivery[path: ["value", "bundleId"]] == "com.example.news")
        #expect(delivery[path: ["value", "payload", "Simulator Target Bundle"]] == nil)
        #expect(delivery[path: ["value", "payload", "articleId"]] == 1234)
        #expect(delivery[path: ["key"]] == .string(String(repeating: "0", count: 64)))
        let notes = json[path: ["input", "notes"]]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(notes.contains { $0.contains("stand-in") })
        // --token and --app-state set the key and a header over what the file gives.
        let token = String(repeating: "ab", count: 32)
        let overridden = try await Self.run(["explain", "--config", Self.config, "--json", "--token", token, "--app-state", "notRunning", file])
        let overriddenJSON = try JSONValue(parsing: Array(overridden.standardOutput.utf8))
        #expect(overriddenJSON[path: ["outputs"]]?.arrayValue?.first?[path: ["key"]] == .string(token))
        #expect(overriddenJSON[path: ["outcome", "launch"]] == "userOpensNotification")
    }

    @Test("--header given twice writes a repeated header (DuplicateHeaders), over an .apns file or a record's own header")
    func repeatedHeaderFlag() async throws {
        let file = Self.root.appendingPathComponent("Config/examples/news-alert.apns").path
        let repeated = try await Self.run(
            ["explain", "--config", Self.config, "--json", "--header", "apns-priority=10", "--header", "apns-priority=5", file])
        #expect(repeated.status == 0, "\(repeated.standardError)")
        let repeatedJSON = try JSONValue(parsing: Array(repeated.standardOutput.utf8))
        #expect(repeatedJSON[path: ["outcome", "reason"]] == "DuplicateHeaders")
        let deadLetter = try #require(repeatedJSON[path: ["outputs"]]?.arrayValue?.first)
        #expect(deadLetter[path: ["topic"]] == "notifications.dead-letter")
        // Given once, a flag replaces the record's header of the same name (whatever its case)
        // rather than repeating it: the record is valid again.
        let token = String(repeating: "cd", count: 32)
        let line = #"{"key":"\#(token)","headers":{"apns-topic":"com.example.chat","APNS-PRIORITY":"7"},"value":{"aps":{"alert":"Hi"}}}"#
        let replaced = try await Self.run(["explain", "--config", Self.config, "--json", "--header", "apns-priority=5", "-"], input: line)
        let replacedJSON = try JSONValue(parsing: Array(replaced.standardOutput.utf8))
        #expect(replacedJSON[path: ["outcome", "disposition"]] == "original", "\(replaced.standardOutput)")
        let invalid = try await Self.run(["explain", "--config", Self.config, "--json", "-"], input: line)
        let invalidJSON = try JSONValue(parsing: Array(invalid.standardOutput.utf8))
        #expect(invalidJSON[path: ["outcome", "reason"]] == "BadPriority")
    }

    @Test("a payload on standard input with flags: --topic, --push-type, --header")
    func payloadOnStandardInput() async throws {
        let run = try await Self.run(
            ["explain", "--config", Self.config, "--json", "--topic", "com.example.news", "--push-type", "background", "--header", "apns-priority=10"],
            input: #"{"aps":{"content-available":1}}"#)
        #expect(run.status == 0, "\(run.standardError)")
        let json = try JSONValue(parsing: Array(run.standardOutput.utf8))
        #expect(json[path: ["input", "format"]] == "payload")
        #expect(json[path: ["outcome", "reason"]] == "BadPriority")
        #expect(json[path: ["steps"]]?.arrayValue?.first?[path: ["facts", "failedCheck"]] == "background-priority")
        // "-" reads standard input too; a JSON-lines record there needs no flags.
        let line = #"{"key":"\#(String(repeating: "cd", count: 32))","headers":{"apns-topic":"com.example.chat"},"value":{"aps":{"alert":"Hi","mutable-content":1}}}"#
        let record = try await Self.run(["explain", "--config", Self.config, "-"], input: line)
        #expect(record.status == 0)
        #expect(record.standardOutput.hasPrefix("Explaining line 1 of standard input (a JSON-lines request record)\n"))
        #expect(record.standardOutput.contains("mark-delivered+strip-secrets"))
        // A record written over several lines is one record, not several.
        let pretty = line.replacingOccurrences(of: #","headers""#, with: ",\n  \"headers\"").replacingOccurrences(of: #","value""#, with: ",\n  \"value\"")
        let prettyRun = try await Self.run(["explain", "--config", Self.config], input: pretty)
        #expect(pretty.split(separator: "\n").count == 3)
        #expect(prettyRun.status == 0, "\(prettyRun.standardError)")
        #expect(prettyRun.standardOutput.contains("mark-delivered+strip-secrets"))
    }

    @Test("inputs that cannot be explained: one plain sentence each, exit status 1 (2 for the configuration)")
    func unusableInputs() async throws {
        let alerts = Self.samples.appendingPathComponent("alerts.jsonl").path
        let several = try await Self.run(["explain", "--config", Self.config, alerts])
        #expect(several.status == 1)
        #expect(several.standardError == "The input has 6 records; pick the one to explain with --line N.\n")
        let outOfRange = try await Self.run(["explain", "--config", Self.config, "--line", "99", alerts])
        #expect(outOfRange.status == 1)
        #expect(outOfRange.standardError.contains("--line 99 is out of range"))
        let notARecord = try await Self.run(["explain", "--config", Self.config], input: #"{"kee":"x"}"#)
        #expect(notARecord.status == 1)
        #expect(notARecord.standardError.contains("Line 1 is not a record: unknown field \"kee\""))
        let empty = try await Self.run(["explain", "--config", Self.config], input: "\n")
        #expect(empty.status == 1)
        #expect(empty.standardError.contains("nothing to explain"))
        let folder = FileManager.default.temporaryDirectory
        let missing = try await Self.run(["explain", "--config", Self.config, "missing.apns"], in: folder)
        #expect(missing.status == 1)
        #expect(missing.standardError.hasPrefix("The input file missing.apns (relative to "))
        #expect(missing.standardError.hasSuffix(") does not exist; set it with the FILE argument.\n"))
        let missingConfig = try await Self.run(["explain", "--config", "nowhere.yaml", alerts], in: folder)
        #expect(missingConfig.status == 2)
        #expect(missingConfig.standardError.contains("The configuration file nowhere.yaml (relative to"))
        #expect(missingConfig.standardError.contains("does not exist; set it with --config."))
        #expect(!missingConfig.standardError.contains("NSCocoaErrorDomain"))
    }

    @Test("a line on a topic explain does not read is not a record: its number and the topics read, exit status 1")
    func unknownTopic() async throws {
        let token = String(repeating: "cd", count: 32)
        let request = #""key": "\#(token)", "headers": {"apns-topic": "com.example.news"}, "value": {"aps": {"alert": "hi"}}"#
        let misspelt = try await Self.run(["explain", "--config", Self.config], input: #"{"topic": "notifications.reqests", \#(request)}"#)
        #expect(misspelt.status == 1)
        #expect(
            misspelt.standardError
                == #"Line 1 is not a record: unknown topic "notifications.reqests"; the topics read are notifications.requests (also a line without topic), "#
                + "notifications.responses, notifications.devices, notifications.channels, notifications.activities, notifications.stored "
                + "and notifications.badges (app states only when topics.appStates is set).\n")
        #expect(misspelt.standardOutput.isEmpty)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("nd-explain-\(UUID().uuidString).jsonl")
        try [#"{"topic": "notifications.app-states", "key": "\#(token)", "value": {"state": "foreground"}}"#, "{\(request)}"]
            .joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let appStates = try await Self.run(["explain", "--config", Self.config, "--line", "1", file.path])
        #expect(appStates.status == 1)
        #expect(appStates.standardError.hasPrefix(#"Line 1 is not a record: unknown topic "notifications.app-states"; "#))
        // The line after it is explained as `dispatch` decides it: the refused line set no app
        // state, so the app's defaultAppState (background) holds.
        let next = try await Self.run(["explain", "--config", Self.config, "--json", "--line", "2", file.path])
        #expect(next.status == 0, "\(next.standardError)")
        let explained = try JSONValue(parsing: Array(next.standardOutput.utf8))
        #expect(explained[path: ["input", "record"]] == "request")
        #expect(explained[path: ["outputs"]]?.arrayValue?.first?[path: ["value", "appState"]] == "background")
    }

    @Test("parsing: --config is required, --header takes NAME=VALUE, --line counts from 1, --help lists the flags")
    func parsing() async throws {
        let noConfig = try await Self.run(["explain", "x.apns"])
        #expect(noConfig.status == 64)
        #expect(noConfig.standardError.contains("--config"))
        let badHeader = try await Self.run(["explain", "--config", Self.config, "--header", "apns-priority"])
        #expect(badHeader.status == 64)
        #expect(badHeader.standardError.contains("--header takes NAME=VALUE"))
        let badLine = try await Self.run(["explain", "--config", Self.config, "--line", "0"])
        #expect(badLine.status == 64)
        #expect(badLine.standardError.contains("--line counts from 1"))
        let help = try await Self.run(["explain", "--help"])
        #expect(help.status == 0)
        for flag in ["--config", "--json", "--line", "--topic", "--push-type", "--app-state", "--header", "--token"] {
            #expect(help.standardOutput.contains(flag), "\(flag)")
        }
    }

    @Test("dispatch --lint: one warning line per warning on standard error, naming the line; outputs unchanged")
    func dispatchLint() async throws {
        let token = String(repeating: "ef", count: 32)
        let input = """
            {"key":"\(token)","headers":{"apns-topic":"com.example.news"},"value":{"aps":{"alert":"Fine"}}}
            {"key":"\(token)","headers":{"apns-topic":"com.example.news"},"value":{"aps":{"badge":1,"mutable-content":1}}}
            {"key":"\(token)","headers":{"apns-topic":"com.example.chat"},"value":{"aps":{"alert":"Hi","category":"MESAGE"}}}
            {"key":"bad","headers":{"apns-topic":"com.example.news"},"value":{"aps":{"mutable-content":1}}}
            """
        let linted = try await Self.run(["dispatch", "--config", Self.config, "--lint"], input: input)
        let plain = try await Self.run(["dispatch", "--config", Self.config], input: input)
        #expect(linted.status == 0)
        let warnings = linted.standardError.split(separator: "\n").map(String.init)
        #expect(warnings.count == 2)
        #expect(warnings.first?.hasPrefix("notification-dispatcher dispatch: line 2: lint mutable-content-without-alert: ") == true)
        #expect(warnings.first?.contains(" Fix: ") == true)
        #expect(warnings.last?.hasPrefix("notification-dispatcher dispatch: line 3: lint category-without-content-extension: ") == true)
        #expect(plain.standardError.isEmpty)
        let stableOutputs = { (run: BuiltBinary.Run) in
            try run.standardOutput.split(separator: "\n").map { Self.stable(try JSONValue(parsing: Array($0.utf8))) }
        }
        #expect(try stableOutputs(linted) == stableOutputs(plain))
    }
}

/// The `explain` examples of docs/rules.md ("Four examples") are the binary's real output,
/// shortened only where `[...]` stands.
@Suite("docs/rules.md explain examples (built binary)")
struct ExplainExampleTests {
    /// One example: the command after `$ ` (continued lines joined) and the lines shown after it.
    struct Example: CustomTestStringConvertible {
        let command: String
        let shown: [String]
        var testDescription: String { command }
    }

    /// The code blocks of docs/rules.md that run `explain`.
    static func examples() throws -> [Example] {
        let rules = try String(contentsOf: BuiltBinary.packageRoot().appendingPathComponent("docs/rules.md"), encoding: .utf8)
        return rules.components(separatedBy: "```\n").compactMap { block in
            var lines = block.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard let first = lines.first, first.hasPrefix("$ "), first.contains("notification-dispatcher explain") else { return nil }
            var command = String(first.dropFirst(2))
            lines.removeFirst()
            while command.hasSuffix("\\"), !lines.isEmpty {
                command = command.dropLast() + lines.removeFirst().trimmingCharacters(in: .whitespaces)
            }
            return Example(command: command, shown: lines)
        }
    }

    @Test("docs/rules.md has the four examples: an extension that did not run, a dead letter, a launch, a response")
    func fourExamples() throws {
        let examples = try Self.examples()
        #expect(examples.count == 4)
        #expect(examples.last?.command.contains("Config/samples/responses.jsonl") == true)
    }

    @Test("each example's lines appear, in order, in what the command prints", arguments: try examples())
    func realOutput(_ example: Example) async throws {
        // `echo 'PAYLOAD' | notification-dispatcher explain ARGS`, or `notification-dispatcher explain ARGS`.
        var input = ""
        var command = example.command
        if command.hasPrefix("echo '"), let end = command.range(of: "' | ") {
            input = String(command[command.index(command.startIndex, offsetBy: 6)..<end.lowerBound])
            command = String(command[end.upperBound...])
        }
        let arguments = command.split(separator: " ").dropFirst().map(String.init)
        let run = try await BuiltBinary.run(arguments, input: input)
        #expect(run.status == 0, "\(run.standardError)")
        var printed = run.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)[...]
        for line in example.shown where line != "[...]" && !line.isEmpty {
            guard let found = printed.firstIndex(of: line) else {
                Issue.record("not printed (in this order): \(line)")
                return
            }
            printed = printed[(found + 1)...]
        }
    }
}
