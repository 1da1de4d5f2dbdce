import ArgumentParser
import Dispatcher
import Foundation
import Logging
import Notifications
import ServiceExtensions

/// `explain`: why one request ends as it does. Dispatches it with the same rules as `dispatch`
/// (service extensions included) and prints the path it took, quoting the sentences behind each
/// decision, with lint's warnings.
struct ExplainCommand: AsyncParsableCommand {
    /// The subcommand's name and help.
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Explain what the rules do with one request, and why, quoting Apple's documentation and the contract.",
        discussion: """
            FILE is a JSON-lines file as `dispatch` reads it (one record, or pick one with --line N), a \
            Simulator .apns file (a payload whose "Simulator Target Bundle" names the app), or a payload \
            (a JSON object with an "aps" key); without FILE, or with "-", standard input is read. \
            --topic, --push-type, --app-state, --header and --token set the request's headers and key \
            over what the input gives (a payload or an .apns file has no device token: a stand-in is used). \
            A configured service extension runs, as in `dispatch`. Exit status: 0 when explained (whatever \
            the outcome), 1 for an input that is not a request, 2 for an unusable configuration.
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

    /// `apns-topic`.
    @Option(help: "The apns-topic header: the app's bundle ID, plus the push type's suffix where it has one.")
    var topic: String?

    /// `apns-push-type`.
    @Option(name: .customLong("push-type"), help: "The apns-push-type header (alert, background, voip, ...).")
    var pushType: String?

    /// `app-state`.
    @Option(name: .customLong("app-state"), help: "The app-state header: foreground, background, suspended, notRunning or forceQuit.")
    var appState: String?

    /// Extra headers.
    @Option(name: .customLong("header"), help: "A header NAME=VALUE (repeatable), e.g. apns-priority=5.")
    var headers: [String] = []

    /// The device token.
    @Option(help: "The device token (the record's key).")
    var token: String?

    /// The input file; nil or `-` reads standard input.
    @Argument(help: "A JSON-lines file, an .apns file or a payload file (default: standard input).")
    var file: String?

    /// Refuses malformed headers and lines.
    func validate() throws {
        for header in headers where !header.contains("=") {
            throw ValidationError("--header takes NAME=VALUE; got \"\(header)\"")
        }
        if let line, line < 1 { throw ValidationError("--line counts from 1") }
    }

    /// The flags as header and key overrides.
    var overrides: ExplainInput.Overrides {
        ExplainInput.Overrides(
            topic: topic, pushType: pushType, appState: appState, token: token,
            headers: headers.map { header in
                let parts = header.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (String(parts[0]), String(parts[1]))
            })
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
                requestsTopic: configuration.topics.requests)
        } catch let problem as NamedFile.Problem {
            printError(problem.description)
            throw ExitCode.failure
        } catch let problem as ExplainInput.Problem {
            printError(problem.description)
            throw ExitCode.failure
        }
        let explanation = try await BuiltInExtensions.withRegistry { registry in
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
            return await Explainer(dispatcher: dispatcher, lint: lint).explain(input.record)
        }
        if json {
            var text = explanation.json(input: describe(input)).serialized()
            text.append(UInt8(ascii: "\n"))
            FileHandle.standardOutput.write(Data(text))
        } else {
            let name = file.flatMap { $0 == "-" ? nil : $0 } ?? "standard input"
            var heading = input.line.map { "line \($0) of \(name)" } ?? name
            heading += " (\(input.format.summary))"
            FileHandle.standardOutput.write(Data(explanation.text(input: heading, notes: input.notes).utf8))
        }
    }

    /// The input as data, for `--json`.
    private func describe(_ input: ExplainInput) -> JSONObject {
        [
            "file": .string(file ?? "-"), "format": .string(input.format.rawValue),
            "line": input.line.map { .number(JSONNumber($0)) } ?? .null,
            "notes": .array(input.notes.map { .string($0) }),
        ]
    }
}
