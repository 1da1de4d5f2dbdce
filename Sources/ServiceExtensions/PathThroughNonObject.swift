/// A `rewrite` step whose path runs through a value that is not an object.
struct PathThroughNonObject: Error, CustomStringConvertible {
    /// The path being set or removed.
    let path: DottedPath
    /// The prefix that holds a non-object.
    let blockedAt: String
    /// The JSON type found there.
    let found: String

    var description: String {
        "cannot write \(path): \(blockedAt) is \(found), not an object"
    }
}
