extension IPAddress {
    /// What kind of network an address belongs to, for the attachment download's safety rule.
    enum Scope: String, Sendable, Hashable {
        /// A globally routable address: downloads may go there.
        case `public`
        /// `127.0.0.0/8`, `::1`.
        case loopback
        /// `10/8`, `172.16/12`, `192.168/16`, `100.64/10` (carrier-grade NAT), `fc00::/7`, `fec0::/10`,
        /// `64:ff9b:1::/48` (NAT64 for local use, RFC 8215: it reaches hosts of the local network).
        case `private`
        /// `169.254/16`, `fe80::/10` (cloud metadata services live here).
        case linkLocal = "link-local"
        /// `224/4`, `ff00::/8`.
        case multicast
        /// `0.0.0.0/8`, `::`.
        case unspecified
        /// `240/4` and the broadcast address: not usable as a destination.
        case reserved
        /// Blocks of the IANA special-purpose registries that are no ordinary internet destination:
        /// `192.0.0.0/24` (IETF protocol assignments), `198.18.0.0/15` (benchmarking, often used
        /// inside data centres), `2001::/32` (Teredo, a tunnel to an IPv4 host whose address is
        /// hidden in the IPv6 one).
        case specialPurpose = "special-purpose"

        /// Whether a download may connect to such an address without `allowHosts`.
        var isPublic: Bool { self == .public }
    }

    /// The scope of this address; an IPv6 address that embeds an IPv4 one is judged by the IPv4 one.
    var scope: Scope {
        if let embedded = embeddedIPv4 { return embedded.scope }
        return family == .v4 ? Self.scopeV4(bytes) : Self.scopeV6(bytes)
    }

    private static func scopeV4(_ b: [UInt8]) -> Scope {
        switch (b[0], b[1]) {
        case (0, _): return .unspecified
        case (127, _): return .loopback
        case (10, _): return .private
        case (172, 16...31): return .private
        case (192, 168): return .private
        case (100, 64...127): return .private
        case (192, 0) where b[2] == 0: return .specialPurpose
        case (198, 18...19): return .specialPurpose
        case (169, 254): return .linkLocal
        case (224...239, _): return .multicast
        case (240...255, _): return .reserved
        default: return .public
        }
    }

    private static func scopeV6(_ b: [UInt8]) -> Scope {
        if b.allSatisfy({ $0 == 0 }) { return .unspecified }
        if b[0..<15].allSatisfy({ $0 == 0 }), b[15] == 1 { return .loopback }
        if b[0] == 0xFF { return .multicast }
        if b[0] == 0xFE, b[1] & 0xC0 == 0x80 { return .linkLocal }
        if b[0] == 0xFE, b[1] & 0xC0 == 0xC0 { return .private }
        if b[0] & 0xFE == 0xFC { return .private }
        if b[0..<6].elementsEqual([0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01]) { return .private }
        if b[0..<4].elementsEqual([0x20, 0x01, 0x00, 0x00]) { return .specialPurpose }
        return .public
    }
}
