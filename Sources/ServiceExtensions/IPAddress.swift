#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address as its network-order bytes (4 or 16 of them).
struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address family.
    enum Family: Sendable, Hashable {
        case v4
        case v6
    }

    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    let bytes: [UInt8]

    /// The address family, from the byte count.
    var family: Family { bytes.count == 4 ? .v4 : .v6 }

    /// Wraps 4 (IPv4) or 16 (IPv6) bytes; nil for any other count.
    init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses a numeric address (`192.0.2.1`, `2001:db8::1`, `::ffff:10.0.0.1`, optionally in
    /// brackets as in URLs, an IPv6 one optionally with a zone, `fe80::1%eth0`); nil for anything
    /// else (host names included).
    init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let percent = text.firstIndex(of: "%") {
            // A zone names an interface, not a different address, and exists for IPv6 only: on
            // anything else a `%` is no address at all (`8.8.8.8%x.example` is a host name).
            let zone = text[text.index(after: percent)...]
            guard Self.isZone(zone), let address = IPAddress(v6: text[..<percent]) else { return nil }
            self = address
            return
        }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            self.bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        guard let address = IPAddress(v6: text) else { return nil }
        self = address
    }

    /// Parses an IPv6 address without brackets or zone.
    private init?(v6 text: Substring) {
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(text), &v6) == 1 else { return nil }
        self.bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    /// Whether `text` can be an IPv6 zone: an interface name or number (letters, digits, `.`, `_`, `-`).
    static func isZone(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= 64
            && text.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || ".-_".unicodeScalars.contains(scalar))
            }
    }

    /// The IPv4 address an IPv6 address carries by a well-known embedding (IPv4-mapped
    /// `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:ab:cd::`);
    /// nil for IPv4 addresses and other IPv6 addresses.
    ///
    /// Such addresses reach the embedded IPv4 host, so they are judged by it.
    var embeddedIPv4: IPAddress? {
        guard family == .v6 else { return nil }
        let prefix96 = bytes[0..<12]
        let mapped: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]
        let compatible = [UInt8](repeating: 0, count: 12)
        let nat64: [UInt8] = [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]
        if prefix96.elementsEqual(mapped) || prefix96.elementsEqual(nat64) {
            return IPAddress(bytes: Array(bytes[12..<16]))
        }
        // `::` and `::1` are IPv6's own unspecified and loopback addresses, not IPv4-compatible ones.
        if prefix96.elementsEqual(compatible), bytes[12] != 0 || bytes[13] != 0 || bytes[14] != 0 || bytes[15] > 1 {
            return IPAddress(bytes: Array(bytes[12..<16]))
        }
        if bytes[0] == 0x20, bytes[1] == 0x02 {
            return IPAddress(bytes: Array(bytes[2..<6]))
        }
        return nil
    }

    /// The address as `inet_ntop` writes it (`192.0.2.1`, `2001:db8::1`).
    var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let addressFamily = family == .v4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { address in
            inet_ntop(addressFamily, address.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return bytes.map(String.init).joined(separator: ".") }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
