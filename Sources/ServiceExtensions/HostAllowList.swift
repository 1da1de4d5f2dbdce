/// The `allowHosts` of an `attachment` step: host names and address ranges that downloads may reach
/// even though they are not public (a company's own media server, a test server on loopback).
struct HostAllowList: Sendable, Hashable {
    /// Host names allowed whatever they resolve to, lower-cased, without a trailing dot.
    let hostNames: Set<String>
    /// Address ranges allowed.
    let ranges: [CIDRRange]

    /// Sorts `entries` into address ranges (anything that parses as an address or CIDR) and host names.
    /// - Returns: nil (with the offending entry) when an entry is neither.
    static func parse(_ entries: [String]) -> Result<HostAllowList, InvalidEntry> {
        var names = Set<String>()
        var ranges: [CIDRRange] = []
        for entry in entries {
            if let range = CIDRRange(entry) {
                ranges.append(range)
            } else if entry.contains("/") || !DNSName.isValid(entry) {
                return .failure(InvalidEntry(entry: entry))
            } else {
                names.insert(normalized(entry))
            }
        }
        return .success(HostAllowList(hostNames: names, ranges: ranges))
    }

    /// An entry that is neither a host name nor an address range.
    struct InvalidEntry: Error {
        let entry: String
    }

    /// Whether `host` (as written in a URL) is allowed by name.
    func allowsName(_ host: String) -> Bool {
        hostNames.contains(Self.normalized(host))
    }

    /// Whether `address` lies in an allowed range.
    func allowsAddress(_ address: IPAddress) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    /// A host name in the form names are compared in.
    static func normalized(_ host: String) -> String {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name
    }
}
