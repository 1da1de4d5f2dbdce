public import Foundation

/// The package's own `notification-dispatcher` executable, as built for the tests.
public enum BuiltBinary {
    /// Where the built executable is.
    public struct NotFound: Error, CustomStringConvertible {
        public var description: String {
            "the notification-dispatcher executable is not built: run `swift build --build-tests` first"
        }
    }

    /// The executable next to the test bundle in the build products directory, or else in the
    /// package's default debug products directory.
    public static func path() throws -> String {
        var candidates: [URL] = []
        if let testBundle = Bundle.main.executableURL {
            candidates.append(testBundle.deletingLastPathComponent().appendingPathComponent("notification-dispatcher"))
        }
        candidates.append(packageRoot().appendingPathComponent(".build/debug/notification-dispatcher"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw NotFound()
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
