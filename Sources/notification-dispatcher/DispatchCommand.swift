import ArgumentParser
import Dispatcher
import DispatcherTools
import Foundation
import Notifications
import ServiceExtensions

/// `notification-dispatcher dispatch`: request and response records as JSON lines in, output
/// records as JSON lines out, no Kafka.
struct DispatchCommand: AsyncParsableCommand {
    /// The subcommand's name and help.
    static let configuration = CommandConfiguration(
        commandName: "dispatch",
        abstract: "Apply the delivery rules offline: request records as JSON lines in, output records out.",
        discussion: """
            Reads one request record per line ({"key": TOKEN, "headers": {...} or [[NAME, VALUE], ...], \
            "value": PAYLOAD, "timestamp": MS}, or "rawValue" for exact bytes; a line whose "topic" is \
            topics.responses is a user's response, one whose "topic" is topics.appStates, topics.devices, \
            topics.channels, topics.activities or topics.stored updates that table for the lines after it \
            (a devices record that brings a device back online delivers what was stored for it); a line \
            without "topic" or on topics.requests is a request, one on any other topic is invalid; \
            "timestamp" is the line's time of processing, else the wall clock) \
            and writes every output record as a JSON line on standard output, \
            in input order, as soon as every earlier line is done (input is read as it comes). Invalid \
            lines are reported on standard error and make the exit status 1; a bad configuration exits \
            with status 2. With --lint, valid requests that are likely not what was meant get a warning \
            line each on standard error (they do not change the exit status); `explain` says more.
            """
    )

    /// Exit status of an unusable configuration.
    static let configurationFailure = ExitCode(2)

    /// The configuration file.
    @Option(name: .long, help: "The YAML configuration file.")
    var config: String

    /// The input file; nil reads standard input.
    @Option(name: .long, help: "The JSON-lines input file (default: standard input).")
    var input: String?

    /// The window of lines in progress or waiting for output.
    @Option(name: .long, help: "How many lines may be in progress at once.")
    var maxConcurrent: Int = 1_000

    /// Whether to warn about valid requests that are likely not what was meant.
    @Flag(help: "Also warn on standard error about valid requests that are likely not what was meant: one line per warning, naming the input line, the reason and the fix.")
    var lint = false

    /// Refuses a window below one line.
    func validate() throws {
        guard maxConcurrent > 0 else { throw ValidationError("--max-concurrent must be at least 1") }
    }

    /// Loads the configuration, builds the dispatcher with the built-in kinds, and streams the lines.
    func run() async throws {
        let configuration = try ConfigurationOptions.load(config)
        let handle: FileHandle
        if let input {
            do {
                try NamedFile(role: "input file", path: input, option: "--input").requireFile()
            } catch {
                Self.printError(error.description)
                throw ExitCode.failure
            }
            guard let file = FileHandle(forReadingAtPath: input) else {
                Self.printError("cannot open the input file \(input)")
                throw ExitCode.failure
            }
            handle = file
        } else {
            handle = FileHandle.standardInput
        }
        let lines = JSONLinesInput(reading: handle, capacity: maxConcurrent)
        let invalid = try await BuiltInExtensions.withRegistry { registry in
            let dispatcher: Dispatcher
            do {
                dispatcher = try Dispatcher(configuration: configuration, registry: registry)
            } catch {
                Self.printError("invalid configuration: \(error)")
                throw Self.configurationFailure
            }
            let offline = JSONLinesDispatch(dispatcher: dispatcher, maxConcurrent: maxConcurrent)
            let lint = self.lint ? PayloadLint(configuration: configuration, mediaURLPath: BuiltInExtensions.mediaURLPath) : nil
            return await offline.run(lines: lines) { offset, result in
                switch result {
                case .blank, .tableUpdated(ignored: nil):
                    break
                case .tableUpdated(ignored: let reason?):
                    // Bad input keeps its rule: a malformed table record is logged and ignored.
                    Self.printError("line \(offset + 1): \(reason)")
                case .invalid(let error):
                    Self.printError("line \(offset + 1): invalid record: \(error)")
                case .dispatched(let dispatched):
                    if let lint, let delivery = dispatched.delivery {
                        // The record's value is the payload's compact form (unless given as rawValue);
                        // the settings are those of the device the line was decided for (section 20).
                        let request = delivery.request
                        for warning in lint.warnings(for: request, payloadBytes: request.payload.serialized().count, settings: delivery.settings) {
                            Self.printError("line \(offset + 1): lint \(warning.line)")
                        }
                    }
                    var text = Data()
                    for record in dispatched.outputs {
                        text.append(contentsOf: JSONLines.encode(record))
                        text.append(UInt8(ascii: "\n"))
                    }
                    FileHandle.standardOutput.write(text)
                }
            }
        }
        if let readError = lines.readError {
            Self.printError("reading \(input ?? "standard input") failed: \(readError)")
            throw ExitCode.failure
        }
        if invalid > 0 {
            throw ExitCode.failure
        }
    }

    /// Writes `message` on standard error.
    private static func printError(_ message: String) {
        FileHandle.standardError.write(Data("notification-dispatcher dispatch: \(message)\n".utf8))
    }
}
