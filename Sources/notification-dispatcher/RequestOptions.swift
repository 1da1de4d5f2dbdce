import ArgumentParser

/// The options that write a request's key and `apns-*` headers from the command line, shared by
/// `send` (which writes the record) and `explain` (which overrides its input's).
struct RequestOptions: ParsableArguments {
    @Option(help: "The device token (hexadecimal): the record's key. send, for a response: taken from the delivery record when absent.")
    var token: String?

    @Option(help: "The apns-topic header: the app's bundle ID, plus the push type's suffix where it has one (a response: the bundle ID alone).")
    var topic: String?

    @Option(name: .customLong("push-type"), help: "The apns-push-type header (alert, background, voip, ...).")
    var pushType: String?

    @Option(
        name: .customLong("header"),
        help: "A header NAME=VALUE (repeatable; a name given twice writes a repeated header; explain replaces the input's header of that name), e.g. apns-collapse-id=abc or app-state=notRunning.")
    var headers: [String] = []

    /// Refuses a `--header` without `=`.
    func validate() throws {
        for header in headers where !header.contains("=") {
            throw ValidationError("--header takes NAME=VALUE; got \"\(header)\"")
        }
    }

    /// The `--header` options as (name, value) pairs, in the order given.
    var headerPairs: [(String, String)] {
        headers.map { header in
            let parts = header.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), String(parts[1]))
        }
    }
}

/// The size of an embedded cluster, shared by `broker` and `dev`.
struct EmbeddedClusterOptions: ParsableArguments {
    @Option(help: "Brokers of the embedded cluster.")
    var brokers: Int = 3

    @Option(help: "Partitions of each product topic.")
    var partitions: Int32 = 12

    func validate() throws {
        guard (1...100).contains(brokers) else { throw ValidationError("--brokers must be between 1 and 100, got \(brokers)") }
        guard (1...10_000).contains(partitions) else { throw ValidationError("--partitions must be between 1 and 10000, got \(partitions)") }
    }
}
