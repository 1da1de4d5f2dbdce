/// An address range written as CIDR (`10.1.0.0/16`, `fd00::/8`); a bare address is a range of one.
struct CIDRRange: Sendable, Hashable, CustomStringConvertible {
    /// The first address of the range (host bits cleared).
    let network: IPAddress
    /// How many leading bits are fixed.
    let prefixLength: Int

    /// Parses `text`; nil when it is not an address with an optional `/length` in range.
    init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(String(parts[0])) else { return nil }
        let maximum = address.bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            guard parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let parsed = Int(parts[1]), (0...maximum).contains(parsed) else {
                return nil
            }
            length = parsed
        }
        self.prefixLength = length
        self.network = IPAddress(bytes: Self.masked(address.bytes, length)) ?? address
    }

    /// Whether `address` lies in the range; an IPv4-mapped (or otherwise embedded) IPv4 address is
    /// also tested as the IPv4 address it reaches.
    func contains(_ address: IPAddress) -> Bool {
        if address.bytes.count == network.bytes.count {
            return Self.masked(address.bytes, prefixLength) == network.bytes
        }
        if let embedded = address.embeddedIPv4, embedded.bytes.count == network.bytes.count {
            return Self.masked(embedded.bytes, prefixLength) == network.bytes
        }
        return false
    }

    var description: String { "\(network)/\(prefixLength)" }

    /// `bytes` with every bit after the first `length` cleared.
    private static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(max(length - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(UInt8(0xFF) >> kept)
        }
    }
}
