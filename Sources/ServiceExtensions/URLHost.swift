import Foundation

/// The host of a URL to fetch, in the one form that is both checked and connected to.
///
/// `URL` hands out the host percent-decoded, and the HTTP client resolves that decoded text
/// itself. A check that read the host any other way would judge one destination while the client
/// connects to another: `http://8.8.8.8%25x.example.test/` is the *name* `8.8.8.8%x.example.test`
/// to the client, whatever a reader stopping at the `%` believes. So the host is taken decoded,
/// as the client takes it, and accepted only as a DNS name or an IP address literal (a `%` only as the zone of an
/// IPv6 literal); the request URL is rewritten with that form and read back the way the client
/// reads it, and anything that does not read back identically is refused.
struct URLHost: Sendable, Hashable {
    /// What the host is.
    enum Kind: Sendable, Hashable {
        /// A DNS name, lower-cased: resolved and checked here, then pinned to a checked address.
        case name(String)
        /// An address literal: checked as it is, and connected to as it is.
        case address(IPAddress)
    }

    /// What the host is.
    let kind: Kind
    /// The host exactly as the HTTP client reads it from ``requestURL`` (no brackets; an IPv6
    /// zone after a plain `%`): the key its DNS override is looked up by.
    let text: String
    /// The URL to request: the original with its host in the canonical form.
    let requestURL: URL

    /// The host of `url`.
    /// - Throws: `AttachmentError.invalidURL` without a host, `.invalidHost` for a host that is
    ///   neither a DNS name nor an address literal, or that the client would read differently.
    init(_ url: URL) throws(AttachmentError) {
        // The decoded host is what the client reads (`URL.host`: percent-decoded once, an
        // internationalised name written out in its `xn--` form).
        guard let encoded = url.host(percentEncoded: true), let decoded = url.host(percentEncoded: false), !decoded.isEmpty
        else { throw .invalidURL(place: "the URL to fetch") }
        // `URL` gives IPv6 literals without their brackets; strip them should that ever change.
        var bare = Substring(decoded)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = bare.dropFirst().dropLast() }
        let written: String
        if bare.contains(":") {
            // Only an IPv6 literal has a colon; its zone (`fe80::1%eth0`) is the one `%` allowed.
            guard let address = IPAddress(String(bare)), address.family == .v6 else { throw .invalidHost }
            kind = .address(address)
            text = String(bare)
            written = "[" + bare.replacingOccurrences(of: "%", with: "%25") + "]"
        } else if let address = IPAddress(String(bare)) {
            // A `%` anywhere else is refused: `IPAddress` accepts a zone on IPv6 only.
            kind = .address(address)
            text = String(bare)
            written = text
        } else if DNSName.isValid(String(bare)) {
            let name = bare.lowercased()
            kind = .name(name)
            text = name
            written = name
        } else {
            throw .invalidHost
        }
        requestURL = try Self.rewrite(url, host: written, encoded: encoded)
        // Read back as the downloader does (`URL(string:)`, `host`, brackets trimmed).
        guard var readBack = URL(string: requestURL.absoluteString)?.host else { throw .invalidHost }
        if readBack.hasPrefix("["), readBack.hasSuffix("]") { readBack = String(readBack.dropFirst().dropLast()) }
        guard readBack == text else { throw .invalidHost }
    }

    /// `url` with its host written as `host`; `url` itself when it is written so already.
    private static func rewrite(_ url: URL, host: String, encoded: String) throws(AttachmentError) -> URL {
        let current = encoded.contains(":") ? "[\(encoded)]" : encoded
        if current == host { return url }
        // Foundation stops the process when a host with a `%` is set, so a zone must already be
        // written in the canonical form (`[fe80::1%25eth0]`): a differently escaped one is refused.
        guard !host.contains("%"), var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw .invalidHost
        }
        components.percentEncodedHost = host
        guard let rewritten = components.url else { throw .invalidHost }
        return rewritten
    }
}
