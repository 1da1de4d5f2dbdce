import Foundation

/// Programs some tests run (`kcat`, `python3`), found on `PATH`, so that a test that needs one
/// says so: `@Test(.enabled(if: Executable.isInstalled("kcat"), "needs kcat on PATH"))`.
public enum Executable {
    /// The full path of the executable `name` on `PATH`, nil when there is none.
    public static func path(of name: String) -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        return directories.lazy
            .map { URL(fileURLWithPath: String($0), isDirectory: true).appendingPathComponent(name).path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Whether the executable `name` is on `PATH`.
    public static func isInstalled(_ name: String) -> Bool {
        path(of: name) != nil
    }

    /// The full path of `name`, for a test enabled only when it is installed (`name` itself
    /// otherwise, which then fails to run with a clear error).
    public static func require(_ name: String) -> String {
        path(of: name) ?? name
    }
}
