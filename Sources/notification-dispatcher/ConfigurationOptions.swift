import ArgumentParser
import Dispatcher
import Foundation

/// The `--config` option shared by the commands that run the dispatcher.
struct ConfigurationOptions: ParsableArguments {
    @Option(name: .long, help: "The configuration file (YAML).")
    var config: String = "Config/dispatcher.yaml"

    /// Loads the file and the environment's overrides, or stops the command with a message that
    /// names the key path and the value, and exit code 2.
    func load() throws -> Configuration {
        do {
            return try Configuration(contentsOfFile: config)
        } catch {
            printError("configuration error in \(config): \(error)")
            throw ExitCode(2)
        }
    }
}

/// Writes a line to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
