import BlockingWork

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Resolves host names with the system resolver (`getaddrinfo`), off the cooperative pool, so that
/// every address a name has can be checked before anything connects.
enum HostResolver {
    /// Why a name did not resolve.
    struct Failure: Error, Sendable {
        /// `gai_strerror`'s text.
        let message: String
    }

    /// Every IPv4 and IPv6 address `host` resolves to, in the resolver's order, without duplicates.
    static func addresses(of host: String) async -> Result<[IPAddress], Failure> {
        await BlockingWork.run { lookUp(host) }
    }

    /// The blocking lookup.
    private static func lookUp(_ host: String) -> Result<[IPAddress], Failure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            return .failure(Failure(message: String(cString: gai_strerror(status))))
        }
        // `list` is ours until freeaddrinfo.
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var entry = list
        while let current = entry {
            if let address = address(of: current.pointee), !addresses.contains(address) {
                addresses.append(address)
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { return .failure(Failure(message: "no IPv4 or IPv6 address")) }
        return .success(addresses)
    }

    /// The IP address in one `addrinfo` entry.
    private static func address(of info: addrinfo) -> IPAddress? {
        guard let socketAddress = info.ai_addr else { return nil }
        switch info.ai_family {
        case AF_INET:
            return socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                var address = pointer.pointee.sin_addr
                return IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) })
            }
        case AF_INET6:
            return socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                var address = pointer.pointee.sin6_addr
                return IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) })
            }
        default:
            return nil
        }
    }
}
