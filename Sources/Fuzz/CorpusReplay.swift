import Foundation

/// What the fuzzer built without libFuzzer (`swift build`) does: replays inputs through the same checks,
/// which makes the committed corpus (`Fuzz/corpus`) a regression suite (FuzzCorpusTests), and
/// writes the seeds the corpus started from.
///
///     notification-dispatcher-fuzz PATH...                         replay files, and the files of folders
///     notification-dispatcher-fuzz --write-seeds SAMPLES OUTPUT    seeds from Config/samples and the tests
///
/// Exits with 1 when an input's checks found something, after replaying all of them.
enum CorpusReplay {
    /// Runs the command line's `arguments` (the program's name left out).
    static func main(_ arguments: [String]) throws {
        var arguments = arguments
        if arguments.first == "--write-seeds" {
            guard arguments.count == 3 else { return usage() }
            let count = try SeedInputs.write(samples: URL(fileURLWithPath: arguments[1]), to: URL(fileURLWithPath: arguments[2]))
            print("fuzz: wrote \(count) seed inputs to \(arguments[2])")
            return
        }
        if arguments.isEmpty || arguments.first?.hasPrefix("-") == true { return usage() }
        var files: [URL] = []
        while let path = arguments.popLast() {
            let url = URL(fileURLWithPath: path)
            if (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
                files += try FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: nil)
            } else {
                files.append(url)
            }
        }
        var failed = 0
        for file in files.sorted(by: { $0.path < $1.path }) {
            let bytes = [UInt8](try Data(contentsOf: file))
            let findings = bytes.withUnsafeBufferPointer(FuzzTarget.run)
            if !findings.isEmpty {
                failed += 1
                for message in findings.messages { print("fuzz: \(file.lastPathComponent): \(message)") }
            }
        }
        print("fuzz: replayed \(files.count) inputs, \(failed) with findings")
        if failed > 0 { exit(1) }
    }

    private static func usage() {
        FileHandle.standardError.write(Data("usage: notification-dispatcher-fuzz PATH... | --write-seeds SAMPLES OUTPUT\n".utf8))
        exit(2)
    }
}
