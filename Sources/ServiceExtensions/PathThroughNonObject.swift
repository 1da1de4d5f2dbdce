import Dispatcher

/// A `rewrite` step whose path runs through a value that is not an object.
struct PathThroughNonObject: ServiceExtensionError, CustomStringConvertible {
    /// The path being set or removed.
    let path: DottedPath
    /// The prefix that holds a non-object.
    let blockedAt: String
    /// The JSON type found there.
    let found: String

    /// The failure's kind in log lines.
    var kind: String { "rewrite-path-through-non-object" }

    var description: String {
        "cannot write \(path): \(blockedAt) is \(found), not an object"
    }
}
