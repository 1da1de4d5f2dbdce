import Foundation

/// The safety check every hop of a download passes before connecting: scheme, then the address of
/// the host (resolved here, every address checked), unless `allowHosts` allows it.
struct DestinationCheck: Sendable {
    /// Non-public hosts and ranges allowed all the same.
    let allowHosts: HostAllowList

    /// A checked destination: where to connect, so that a second DNS answer cannot change it.
    struct Destination: Sendable, Hashable {
        /// The URL to request, its host written as checked (`URLHost.requestURL`).
        let url: URL
        /// The host exactly as the HTTP client reads it from `url` (`URLHost.text`).
        let host: String
        /// The checked addresses the connection may go to, in the resolver's order.
        let addresses: [IPAddress]
        /// Whether `host` is a name (then the connection is pinned to a checked address) rather than an address.
        let hostIsName: Bool
    }

    /// Checks `url`: http or https, a host in canonical form (`URLHost`), and addresses that are
    /// public or allowed.
    /// - Throws: `AttachmentError` (`schemeNotAllowed`, `invalidURL`, `invalidHost`, `unresolvable`,
    ///   `addressNotAllowed`).
    func check(_ url: URL) async throws(AttachmentError) -> Destination {
        guard let scheme = url.scheme?.lowercased() else { throw .invalidURL(place: "the URL to fetch") }
        guard scheme == "http" || scheme == "https" else { throw .schemeNotAllowed(scheme) }
        let host = try URLHost(url)
        switch host.kind {
        case .address(let literal):
            try judge(literal, host: host.text, allowedByName: false)
            return Destination(url: host.requestURL, host: host.text, addresses: [literal], hostIsName: false)
        case .name(let name):
            let allowedByName = allowHosts.allowsName(name)
            let addresses: [IPAddress]
            switch await HostResolver.addresses(of: name) {
            case .success(let resolved): addresses = resolved
            case .failure(let failure): throw .unresolvable(host: name, detail: failure.message)
            }
            // Every address is checked, not just the one used: a name with one private address among
            // public ones is refused, since which one a client picks is not ours to rely on.
            for address in addresses {
                try judge(address, host: name, allowedByName: allowedByName)
            }
            return Destination(url: host.requestURL, host: host.text, addresses: addresses, hostIsName: true)
        }
    }

    /// Refuses `address` when it is not public and neither `host` nor the address is allowed.
    func judge(_ address: IPAddress, host: String, allowedByName: Bool) throws(AttachmentError) {
        let scope = address.scope
        guard scope.isPublic || allowedByName || allowHosts.allowsName(host) || allowHosts.allowsAddress(address) else {
            throw .addressNotAllowed(host: host, address: address, scope: scope)
        }
    }
}
