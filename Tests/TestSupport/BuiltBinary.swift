public import Foundation

/// The package's own executables, as built for the tests: the product, `notification-dispatcher`,
/// and the benchmarks' `notification-dispatcher-bench`.
public enum BuiltBinary {
    /// The product's executable name.
    public static let product = "notification-dispatcher"
    /// The benchmarks' executable name.
    public static let bench = "notification-dispatcher-bench"

    /// An executable that is not built.
    public struct NotFound: Error, CustomStringConvertible {
        /// The executable's name.
        public let executable: String

        public var description: String {
            "the \(executable) executable is not built: run `swift build --build-tests` first"
        }
    }

    /// The product's executable (``path(of:)`` of ``product``).
    public static func path() throws -> String {
        try path(of: product)
    }

    /// The executable `name` next to the test bundle in the build products directory, or else in
    /// the package's default debug products directory.
    public static func path(of name: String) throws -> String {
        var candidates: [URL] = []
        if let testBundle = Bundle.main.executableURL {
            candidates.append(testBundle.deletingLastPathComponent().appendingPathComponent(name))
        }
        candidates.append(packageRoot().appendingPathComponent(".build/debug/\(name)"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw NotFound(executable: name)
        }
        return found.path
    }

    /// The package's root directory (the one holding `Package.swift`), found from this file's path.
    public static func packageRoot() -> URL {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/",
            !FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path)
        {
            directory.deleteLastPathComponent()
        }
        return directory
    }
}
