import ArgumentParser
import Dispatcher
import Foundation
import JSON
import Records

extension BenchCommand {
    /// `requests`: the realistic requests that `compare` and `counts` preload, written out, so
    /// that what a benchmark fed can be read (or given to `notification-dispatcher dispatch`).
    struct Requests: ParsableCommand {
        /// The subcommand's name and help.
        static let configuration = CommandConfiguration(
            commandName: "requests",
            abstract: "Write the realistic requests that compare and counts preload, as JSON lines.",
            discussion: """
                One line per request in the dispatch command's input format: topic, key (the device \
                token), headers, and the value's exact bytes in rawValue, in the order they are \
                preloaded. The same options as compare and counts choose them.
                """
        )

        /// How many requests.
        @Option(help: "Requests to write.")
        var records: Int = 200

        /// The JSON style and the devices (the app state changes no record).
        @OptionGroup var input: BenchInputOptions

        /// Refuses a record count that is not positive.
        func validate() throws {
            guard records > 0 else { throw ValidationError("--records must be positive") }
        }

        /// Writes the lines to standard output.
        func run() throws {
            var text: [UInt8] = []
            for request in input.requests(count: records) {
                let line: JSONValue = .object(JSONObject([
                    ("topic", .string(TopicSettings().requests)),
                    ("key", .string(String(decoding: request.key, as: UTF8.self))),
                    ("headers", .object(JSONObject(request.headers.map { ($0.name, .string(String(decoding: $0.value ?? [], as: UTF8.self))) }))),
                    ("rawValue", .string(String(decoding: request.value, as: UTF8.self))),
                ]))
                text += line.serialized()
                text.append(UInt8(ascii: "\n"))
            }
            FileHandle.standardOutput.write(Data(text))
        }
    }
}
