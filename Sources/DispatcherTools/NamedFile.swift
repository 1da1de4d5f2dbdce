package import Foundation

/// A file or folder named on the command line, with the option that names it, so that a path that
/// cannot be used reads as one plain sentence naming the path and the option (never Foundation's
/// `Error Domain=NSCocoaErrorDomain ...`). Shared by the command-line tools (`notification-dispatcher`
/// and `notification-dispatcher-bench`).
package struct NamedFile {
    /// What the file is, for a person (`configuration file`).
    package let role: String
    /// The path as given.
    package let path: String
    /// The option or argument that sets it (`--config`, `FILE`).
    package let option: String

    /// A file that cannot be used, in one sentence.
    package struct Problem: Error, CustomStringConvertible {
        /// The sentence.
        package let description: String
    }

    /// A file named by `option`.
    package init(role: String, path: String, option: String) {
        self.role = role
        self.path = path
        self.option = option
    }

    /// The file's bytes.
    /// - Throws: ``Problem`` when it does not exist, is a folder or cannot be read.
    package func read() throws(Problem) -> Data {
        try requireFile()
        guard let data = FileManager.default.contents(atPath: path) else {
            throw problem("cannot be read (check its permissions)")
        }
        return data
    }

    /// Checks that the path is a readable file.
    /// - Throws: ``Problem`` when it does not exist, is a folder or cannot be read.
    package func requireFile() throws(Problem) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { throw problem("does not exist") }
        guard !isFolder.boolValue else { throw problem("is a folder, not a file") }
        guard FileManager.default.isReadableFile(atPath: path) else { throw problem("cannot be read (check its permissions)") }
    }

    /// Checks that the path is a folder.
    /// - Throws: ``Problem`` when it does not exist or is a file.
    package func requireFolder() throws(Problem) {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { throw problem("does not exist") }
        guard isFolder.boolValue else { throw problem("is a file, not a folder") }
    }

    /// Checks that a file can be written at the path: its folder exists.
    /// - Throws: ``Problem`` when the folder does not exist.
    package func requireWritableLocation() throws(Problem) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw problem("cannot be written: its folder \(folder) does not exist")
        }
    }

    /// The sentence for `what` went wrong: `The configuration file x.yaml does not exist (in /tmp); set it with --config.`
    private func problem(_ what: String) -> Problem {
        let relative = path.hasPrefix("/") ? "" : " (relative to \(FileManager.default.currentDirectoryPath))"
        return Problem(description: "The \(role) \(path)\(relative) \(what); set it with \(option).")
    }
}
