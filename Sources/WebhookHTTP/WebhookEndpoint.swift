/// Where a webhook's connections go: scheme, host and port. Calls share kept-alive connections
/// only within one endpoint.
package struct WebhookEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// Whether connections use TLS (`https`).
    package var usesTLS: Bool
    /// The host as written in the URL, without IPv6 brackets.
    package var host: String
    /// The TCP port (the scheme's default when the URL names none).
    package var port: Int

    /// The endpoint for `host` and `port`, with TLS or without.
    package init(usesTLS: Bool, host: String, port: Int) {
        self.usesTLS = usesTLS
        self.host = host
        self.port = port
    }

    /// The host as it goes into a `Host` header or a URL: an IPv6 address in brackets.
    var bracketedHost: String { host.contains(":") ? "[\(host)]" : host }

    /// Whether the host is a literal IP address, which TLS must not send as the server name.
    var hostIsAddress: Bool {
        host.contains(":") || (host.split(separator: ".").count == 4 && host.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber })
    }

    package var description: String { "\(usesTLS ? "https" : "http")://\(bracketedHost):\(port)" }
}
