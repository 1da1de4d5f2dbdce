/// The metadata keys of the server's log lines, in the package's naming (`http.host`, `http.port`
/// are the operations server's).
enum LogKey {
    static let method = "http.method"
    static let path = "http.path"
    static let error = "error"
}
