import ChildProcesses
import Dispatcher
import DispatcherTools
import Foundation
import JSON
import Notifications
import Records
import Synchronization
import TestSupport
import Testing

/// The `dispatch` command end to end, through the built binary.
@Suite("dispatch command (built binary)")
struct DispatchCommandTests {
    /// The package root, where `Config/` is.
    static let packageRoot = BuiltBinary.packageRoot()

    /// What a run of the binary produced.
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String

        /// Standard output as JSON objects, one per line.
        func records() throws -> [JSONObject] {
            try stdout.split(separator: "\n").map { try DispatchCommandTests.object(Array($0.utf8)) }
        }
    }

    /// Runs the built binary with `arguments`, feeding `input` on standard input, in `directory`
    /// (the package root unless given).
    static func run(_ arguments: [String], input: String = "", in directory: URL? = nil) async throws -> Run {
        let run = try await BuiltBinary.run(arguments, input: input, in: directory)
        return Run(status: run.status, stdout: run.standardOutput, stderr: run.standardError)
    }

    private static let config = packageRoot.appendingPathComponent("Config/dispatcher.yaml").path

    /// A line that should be a JSON object and is not.
    struct NotAnObject: Error {}

    /// `bytes` parsed as a JSON object.
    static func object(_ bytes: [UInt8]) throws -> JSONObject {
        // (`#require` cannot be used: JSONValue is ExpressibleByNilLiteral, which confuses its nil check.)
        guard let object = try JSONValue(parsing: bytes).objectValue else { throw NotAnObject() }
        return object
    }

    @Test("alert samples: one delivery per line in input order, launches after their delivery")
    func alerts() async throws {
        let run = try await Self.run(["dispatch", "--config", Self.config, "--input", Self.packageRoot.appendingPathComponent("Config/samples/alerts.jsonl").path])
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        let records = try run.records()
        let deliveries = records.filter { $0["topic"] == "notifications.deliveries" }
        #expect(deliveries.count == 6)
        #expect(records.allSatisfy { $0["topic"] == "notifications.deliveries" || $0["topic"] == "notifications.launches" })
        let summary = deliveries.map { record in
            [record["value"]?[path: ["disposition"]]?.stringValue ?? "?", record["value"]?[path: ["reason"]]?.stringValue ?? "?"]
        }
        #expect(
            summary == [
                ["modified", "extension"], ["modified", "extension"], ["original", "no-extension"],
                ["original", "not-mutable"], ["modified", "extension"], ["original", "no-alert"],
            ])
        let first = try #require(deliveries.first)
        #expect(first["key"] == .string(String(repeating: "01", count: 32)))
        #expect(first["headers"] == ["apns-id": "6f1c2a3e-0000-4000-8000-000000000001"])
        #expect(first["value"]?[path: ["extension", "name"]] == "tag-thread")
        #expect(first["value"]?[path: ["payload", "aps", "thread-id"]] == "news")
        #expect(first["value"]?[path: ["presentation", "contentExtension"]] == "NewsPreview")
        #expect(first["value"]?[path: ["payload", "articleId"]] == 1234)
        #expect(deliveries[1]["headers"]?[path: ["traceparent"]] == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        #expect(deliveries[1]["value"]?[path: ["extension", "name"]] == "live-badge+live-cleanup")
        // Derived apns-id: UUID v5 of kafka://<requests topic>/0/<line number>.
        let derived = MessageID.derived(for: TopicPartitionOffset(topic: "notifications.requests", partition: 0, offset: 1))
        #expect(deliveries[1]["value"]?[path: ["apnsId"]] == .string(derived.description))
    }

    @Test("invalid samples: one dead letter per line with the reason, the original bytes and the source; a feedback record after BadDeviceToken")
    func invalid() async throws {
        let run = try await Self.run(["dispatch", "--config", Self.config, "--input", Self.packageRoot.appendingPathComponent("Config/samples/invalid.jsonl").path])
        #expect(run.status == 0)
        let all = try run.records()
        // The malformed token's dead letter is followed by its feedback record (SEMANTICS section 12.2).
        #expect(all.map { $0["topic"]?.stringValue ?? "" }.firstIndex(of: "notifications.feedback") == 2)
        #expect(all.filter { $0["topic"] == "notifications.feedback" }.count == 1)
        let records = all.filter { $0["topic"] != "notifications.feedback" }
        #expect(records.allSatisfy { $0["topic"] == "notifications.dead-letter" && $0["rawValue"] != nil && $0["value"] == nil })
        #expect(
            records.compactMap { $0["headers"]?[path: ["dlq-reason"]]?.stringValue } == [
                "MissingDeviceToken", "BadDeviceToken", "MissingTopic", "InvalidPushType", "BadMessageId", "BadPriority",
                "BadExpirationDate", "BadAppState", "PayloadEmpty", "InvalidPayload", "InvalidPayload", "PayloadTooLarge",
                "BadPriority", "BadTopic", "TopicDisallowed",
            ])
        #expect(records.map { $0["headers"]?[path: ["dlq-source-offset"]] } == (0..<15).map { .string(String($0)) })
        #expect(records[9]["rawValue"] == #"{"aps": "#)
        #expect(records[0]["key"] == .null)
        #expect(records[11]["headers"]?[path: ["dlq-status"]] == "413")
        #expect(records[0]["headers"]?[path: ["dlq-consumer-group"]] == "notification-dispatcher")
    }

    @Test("every sample file runs cleanly: one delivery or dead letter per request line (not per devices record)")
    func allSamples() async throws {
        let samples = try FileManager.default.contentsOfDirectory(
            atPath: Self.packageRoot.appendingPathComponent("Config/samples").path
        ).filter { $0.hasSuffix(".jsonl") }.sorted()
        #expect(samples.count >= 7)
        for sample in samples {
            let input = try String(contentsOf: Self.packageRoot.appendingPathComponent("Config/samples/\(sample)"), encoding: .utf8)
            let lines = input.split(separator: "\n").filter {
                !$0.contains(#""topic":"notifications.devices""#) && !$0.contains(#""topic":"notifications.channels""#)
            }.count
            let run = try await Self.run(["dispatch", "--config", Self.config, "--input", Self.packageRoot.appendingPathComponent("Config/samples/\(sample)").path])
            #expect(run.status == 0, "\(sample): \(run.stderr)")
            // A broadcast has a delivery per subscribed activity (section 15), and a request to an
            // offline device its delivery when the device comes back (section 16): their samples
            // are checked record by record in their own suites.
            guard !input.contains("apns-channel-id"), !input.contains(#""online":false"#) else { continue }
            let primary = try run.records().filter {
                $0["topic"] != "notifications.launches" && $0["topic"] != "notifications.feedback" && $0["topic"] != "notifications.activities"
            }
            #expect(primary.count == lines, "\(sample)")
        }
    }

    @Test("standard input: blank lines count for offsets; an invalid line is reported with its number and exits 1")
    func stdinWithInvalidLine() async throws {
        let token = String(repeating: "ab", count: 32)
        let input = """
            {"key": "\(token)", "headers": {"apns-topic": "com.example.news", "app-state": "notRunning"}, "value": {"aps": {"alert": "one"}}}

            {"key": "\(token)", "headers": {"apns-topic": "com.example.news"}, "value": {"aps": {"alert": true}}}
            this is not a record
            {"key": "\(token)", "headers": {"apns-topic": "com.example.news", "apns-priority": 5}, "value": {"aps": {"alert": "four"}}}
            """
        let run = try await Self.run(["dispatch", "--config", Self.config], input: input)
        #expect(run.status == 1)
        #expect(run.stderr.contains("line 4"))
        #expect(!run.stderr.contains("line 5"))
        let records = try run.records()
        #expect(
            records.map { $0["topic"]?.stringValue ?? "" } == [
                "notifications.deliveries", "notifications.launches", "notifications.dead-letter",
                "notifications.deliveries",
            ])
        #expect(records[2]["headers"]?[path: ["dlq-source-offset"]] == "2")
        #expect(records[3]["value"]?[path: ["priority"]] == 5)
    }

    @Test("a line on a topic the command does not read (misspelt, or app states unconfigured) is refused with its number and the topics read; the rest is processed; exit 1")
    func unknownTopics() async throws {
        let token = String(repeating: "cd", count: 32)
        let request = #""key": "\#(token)", "headers": {"apns-topic": "com.example.news"}, "value": {"aps": {"alert": "hi"}}"#
        let input = [
            "{\(request)}",
            #"{"topic": "notifications.reqests", \#(request)}"#,
            #"{"topic": "notifications.app-states", "key": "\#(token)", "value": {"state": "foreground"}}"#,
            #"{"topic": "notifications.requests", \#(request)}"#,
            #"{"topic": "notifications.deliveries", \#(request)}"#,
        ].joined(separator: "\n")
        let run = try await Self.run(["dispatch", "--config", Self.config], input: input)
        #expect(run.status == 1)
        let read =
            "the topics read are notifications.requests (also a line without topic), notifications.responses, notifications.devices, "
            + "notifications.channels, notifications.activities, notifications.stored and notifications.badges (app states only when "
            + "topics.appStates is set)"
        #expect(
            run.stderr.split(separator: "\n") == [
                #"notification-dispatcher dispatch: line 2: invalid record: unknown topic "notifications.reqests"; \#(read)"#,
                #"notification-dispatcher dispatch: line 3: invalid record: unknown topic "notifications.app-states"; \#(read)"#,
                #"notification-dispatcher dispatch: line 5: invalid record: unknown topic "notifications.deliveries"; \#(read)"#,
            ])
        // Lines 1 and 4 are requests; the refused lines produce nothing (no MissingTopic dead letter).
        let records = try run.records()
        #expect(records.map { $0["topic"]?.stringValue ?? "" } == ["notifications.deliveries", "notifications.deliveries"])

        // With topics.appStates set (and topics.devices unset), the app-states line updates its
        // table and the devices topic is no longer read.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("nd-topics-\(UUID().uuidString).yaml")
        try "topics:\n  appStates: notifications.app-states\n  devices: \"\"\napps:\n  com.example.news: {}\n".write(
            to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let configured = try await Self.run(
            ["dispatch", "--config", file.path],
            input: input + "\n" + #"{"topic": "notifications.devices", "key": "\#(token)", "value": {"online": true}}"#)
        #expect(configured.status == 1)
        let lines = configured.stderr.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.map { $0.contains("line 2: ") } == [true, false, false])
        #expect(lines.map { $0.contains("line 5: ") } == [false, true, false])
        #expect(lines.map { $0.contains("line 6: ") } == [false, false, true])
        #expect(
            lines.last?.hasSuffix(
                #"unknown topic "notifications.devices"; the topics read are notifications.requests (also a line without topic), "#
                    + "notifications.responses, notifications.app-states, notifications.channels, notifications.activities, "
                    + "notifications.stored and notifications.badges")
                == true)
        let appState = try configured.records().filter { $0["topic"] == "notifications.deliveries" }.map { $0["value"]?[path: ["appState"]]?.stringValue }
        #expect(appState == ["notRunning", "foreground"], "line 3 set the app state the request of line 4 reads")
    }

    @Test("output streams: a line's records appear while standard input is still open")
    func streaming() async throws {
        let binary = URL(fileURLWithPath: try BuiltBinary.path())
        try #require(FileManager.default.isExecutableFile(atPath: binary.path))
        let process = try SpawnedProcess(
            binary.path, ["dispatch", "--config", Self.config], directory: Self.packageRoot.path, input: .pipe, output: .pipe)
        let writer = try #require(process.input)
        let reader = try #require(process.output)
        let token = String(repeating: "cd", count: 32)
        writer.write(
            Data(#"{"key": "\#(token)", "headers": {"apns-topic": "com.example.news"}, "value": {"aps": {"alert": "hi"}}}"#.utf8 + [0x0A]))
        let inputClosedEarly = Flag()
        let first: [UInt8]? = await withTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var lines = JSONLinesInput(reading: reader).makeAsyncIterator()
                return await lines.next()
            }
            group.addTask {
                // Backstop only: if no output came while input is open, close it so the test ends (and fails).
                try? await Task.sleep(for: .seconds(30))
                if !Task.isCancelled {
                    inputClosedEarly.set()
                    try? writer.close()
                }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        #expect(!inputClosedEarly.isSet)
        let record = try Self.object(first ?? [])
        #expect(record["topic"] == "notifications.deliveries")
        #expect(record["key"] == .string(token))
        try writer.close()
        let termination = await process.waitForExit()
        #expect(termination?.exitedNormally == true && termination?.status == 0)
    }

    @Test("a bad configuration: a clear message naming the key path, exit status 2, no output")
    func badConfiguration() async throws {
        let directory = FileManager.default.temporaryDirectory
        let file = directory.appendingPathComponent("nd-bad-\(UUID().uuidString).yaml")
        try "dispatch:\n  deadline: 30\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try await Self.run(["dispatch", "--config", file.path], input: "")
        #expect(run.status == 2)
        #expect(run.stderr.contains("dispatch.deadline"))
        #expect(run.stderr.contains("bare number"))
        #expect(run.stdout.isEmpty)
    }

    @Test("an unknown extension kind is a bad configuration too")
    func unknownKind() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("nd-kind-\(UUID().uuidString).yaml")
        try "apps:\n  com.example.app:\n    serviceExtension: {kind: teleport}\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try await Self.run(["dispatch", "--config", file.path], input: "")
        #expect(run.status == 2)
        #expect(run.stderr.contains(#"apps["com.example.app"].serviceExtension.kind"#))
        #expect(run.stderr.contains("teleport"))
    }

    @Test("a missing configuration file exits 2; --help describes the options")
    func missingFileAndHelp() async throws {
        let missing = try await Self.run(["dispatch", "--config", "/nonexistent/dispatcher.yaml"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("/nonexistent/dispatcher.yaml"))
        let help = try await Self.run(["dispatch", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--config"))
        #expect(help.stdout.contains("--input"))
    }
}

/// A flag set from any task.
final class Flag: Sendable {
    private let state = Mutex(false)

    /// Whether `set()` was called.
    var isSet: Bool { state.withLock { $0 } }

    /// Sets the flag.
    func set() { state.withLock { $0 = true } }
}
