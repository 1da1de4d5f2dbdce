import ArgumentParser
import Dispatcher
import DispatcherTools
import Foundation

/// The `--config` option shared by the commands that run the dispatcher.
struct ConfigurationOptions: ParsableArguments {
    @Option(name: .long, help: "The configuration file (YAML).")
    var config: String = "Config/dispatcher.yaml"

    /// Loads the file and the environment's overrides, or stops the command with a message that
    /// names the key path and the value, and exit code 2.
    func load() throws -> Configuration {
        try Self.load(config)
    }

    /// Loads the configuration file at `path` (set with `--config`), or stops the command with a
    /// message (a plain sentence for a file that does not exist) and exit code 2.
    static func load(_ path: String) throws -> Configuration {
        do {
            try NamedFile(role: "configuration file", path: path, option: "--config").requireFile()
            return try Configuration(contentsOfFile: path)
        } catch let problem as NamedFile.Problem {
            printError(problem.description)
            throw ExitCode(2)
        } catch {
            printError("configuration error in \(path): \(error)")
            throw ExitCode(2)
        }
    }
}

/// Writes a line to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}
