import ArgumentParser
import Dispatcher
import DispatcherTools
import Foundation
import JSON
import Logging
import Notifications
import ServiceExtensions

/// `explain`: why one request or response ends as it does. Decides it with the same rules as
/// `dispatch` (service extensions included) and prints the path it took, quoting the sentences
/// behind each decision, with lint's warnings on a request.
struct ExplainCommand: AsyncParsableCommand {
    /// The subcommand's name and help.
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Explain what the rules do with one request or response, and why, quoting Apple's documentation and the contract.",
        discussion: """
            FILE is a JSON-lines file as `dispatch` reads it (one record, or pick one with --line N; a \
            line whose "topic" is topics.responses is a user's response, and one on a topic `dispatch` \
            does not read is not a record), a Simulator .apns file (a \
            payload whose "Simulator Target Bundle" names the app), a payload (a JSON object with an \
            "aps" key), or a response's value (a JSON object with a "notification" key); without FILE, \
            or with "-", standard input is read. --topic, --push-type, --app-state, --header and --token \
            set the record's headers and key over what the input gives (a payload, a response value or \
            an .apns file has no device token: a stand-in is used); a response's --topic is the app's \
            bundle ID. A configured service extension runs, as in `dispatch`. Exit status: 0 when \
            explained (whatever the outcome), 1 for an input that is not a record, 2 for an unusable \
            configuration.
            """
    )

    /// The configuration file.
    @Option(help: "The YAML configuration file.")
    var config: String

    /// Whether to print data rather than text.
    @Flag(help: "Print the explanation as one JSON object instead of text.")
    var json = false

    /// The line of a JSON-lines file with several records.
    @Option(help: "The line (from 1) to explain, in a JSON-lines file with several records.")
    var line: Int?

    /// `--token`, `--topic`, `--push-type` and `--header`.
    @OptionGroup var request: RequestOptions

    /// `app-state`.
    @Option(name: .customLong("app-state"), help: "The app-state header: foreground, background, suspended, notRunning or forceQuit.")
    var appState: String?

    /// The input file; nil or `-` reads standard input.
    @Argument(help: "A JSON-lines file, an .apns file, a payload file or a response value file (default: standard input).")
    var file: String?

    /// Refuses malformed headers and lines.
    func validate() throws {
        if let line, line < 1 { throw ValidationError("--line counts from 1") }
    }

    /// The flags as header and key overrides.
    var overrides: ExplainInput.Overrides {
        ExplainInput.Overrides(
            topic: request.topic, pushType: request.pushType, appState: appState, token: request.token, headers: request.headerPairs)
    }

    /// Reads the input, dispatches it and prints the explanation.
    func run() async throws {
        let configuration = try ConfigurationOptions.load(config)
        let input: ExplainInput
        do {
            let data: [UInt8]
            if let file, file != "-" {
                data = Array(try NamedFile(role: "input file", path: file, option: "the FILE argument").read())
            } else {
                data = Array(FileHandle.standardInput.readDataToEndOfFile())
            }
            input = try ExplainInput(
                data, isAPNSFile: file?.lowercased().hasSuffix(".apns") ?? false, line: line, overrides: overrides,
                topics: configuration.topics)
        } catch let problem as NamedFile.Problem {
            printError(problem.description)
            throw ExitCode.failure
        } catch let problem as ExplainInput.Problem {
            printError(problem.description)
            throw ExitCode.failure
        }
        let explained = try await BuiltInExtensions.withRegistry { registry in
            let dispatcher: Dispatcher
            do {
                // Failed steps are part of the explanation: no separate log line for them.
                dispatcher = try Dispatcher(
                    configuration: configuration, registry: registry,
                    extensionFailures: ExtensionFailureLog(logger: Logger(label: "explain") { _ in SwiftLogNoOpLogHandler() }))
            } catch {
                printError("configuration error in \(config): \(error)")
                throw ExitCode(2)
            }
            let lint = PayloadLint(configuration: configuration, mediaURLPath: BuiltInExtensions.mediaURLPath)
            // The lines before this one are read first, as `dispatch` reads them: their state-table
            // records and accepted requests are in the tables this line is decided with.
            let offline = JSONLinesDispatch(dispatcher: dispatcher)
            for (offset, earlier) in input.earlierLines.enumerated() { _ = offline.replay(earlier, offset: offset) }
            if let line = input.line, offline.isTableRecord(input.text) {
                switch await offline.process(input.text, offset: line - 1) {
                case .tableUpdated(let ignored): return ExplainedLine.tableRecord(ignored: ignored, delivered: nil)
                // A devices record that brings a device back online delivers what was stored (section 16.3).
                case .dispatched(let result): return ExplainedLine.tableRecord(ignored: nil, delivered: result)
                case .blank, .invalid: break
                }
            }
            let explanation = await Explainer(dispatcher: dispatcher, lint: lint)
                .explain(input.record, tables: offline.tables, now: input.record.timestamp ?? Date())
            return ExplainedLine.record(explanation)
        }
        let explanation: Explanation
        switch explained {
        case .record(let record):
            explanation = record
        case .tableRecord(let ignored, let delivered):
            printTableRecord(input, ignored: ignored, delivered: delivered)
            return
        }
        if json {
            var text = explanation.json(input: describe(input, explanation)).serialized()
            text.append(UInt8(ascii: "\n"))
            FileHandle.standardOutput.write(Data(text))
        } else {
            let name = file.flatMap { $0 == "-" ? nil : $0 } ?? "standard input"
            var heading = input.line.map { "line \($0) of \(name)" } ?? name
            heading += " (\(input.summary(isResponse: explanation.isResponse)))"
            FileHandle.standardOutput.write(Data(explanation.text(input: heading, notes: input.notes).utf8))
        }
    }

    /// What the explained line was: a record the rules decide, or a state-table record.
    private enum ExplainedLine {
        case record(Explanation)
        case tableRecord(ignored: String?, delivered: DispatchResult?)
    }

    /// Explains a record of a state table's topic (devices, app states, channels, activities,
    /// stored): it updates its table for the lines after it and produces nothing (SEMANTICS section
    /// 11.2), except a devices record that brings a device back online: it delivers what was stored
    /// for it (`delivered`, section 16.3).
    private func printTableRecord(_ input: ExplainInput, ignored: String?, delivered: DispatchResult?) {
        let outputs = delivered?.outputs ?? []
        let count = delivered?.parts.count ?? 0
        let outcome =
            ignored.map { "ignored: \($0) (a malformed entry is logged and ignored)" }
            ?? (delivered == nil
                ? "updates its table for the lines after it (a null value deletes the entry); no output"
                : "brings the device back online: delivers the \(count) notification\(count == 1 ? "" : "s") stored for it, in the order stored, each followed by a stored tombstone (SEMANTICS section 16.3)")
        if json {
            let object: JSONObject = [
                "input": [
                    "file": .string(file ?? "-"), "format": .string(input.format.rawValue), "record": "state-table",
                    "line": input.line.map { .number(JSONNumber($0)) } ?? .null,
                ],
                "outcome": [
                    "table": .string(ignored == nil ? "updated" : "ignored"), "reason": ignored.map { .string($0) } ?? .null,
                    "delivered": .number(JSONNumber(count)),
                ],
                "steps": [], "warnings": [],
                "outputs": .array(outputs.compactMap { try? JSONValue(parsing: JSONLines.encode($0)) }),
            ]
            var text = JSONValue.object(object).serialized()
            text.append(UInt8(ascii: "\n"))
            FileHandle.standardOutput.write(Data(text))
        } else {
            let name = file.flatMap { $0 == "-" ? nil : $0 } ?? "standard input"
            let heading = input.line.map { "line \($0) of \(name)" } ?? name
            var text = "\(heading) (a state-table record, SEMANTICS section 11.2)\n  \(outcome)\n"
            for output in outputs { text += "  " + String(decoding: JSONLines.encode(output), as: UTF8.self) + "\n" }
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }

    /// The input as data, for `--json`.
    private func describe(_ input: ExplainInput, _ explanation: Explanation) -> JSONObject {
        [
            "file": .string(file ?? "-"), "format": .string(input.format.rawValue),
            "record": .string(explanation.isResponse ? "response" : "request"),
            "line": input.line.map { .number(JSONNumber($0)) } ?? .null,
            "notes": .array(input.notes.map { .string($0) }),
        ]
    }
}
