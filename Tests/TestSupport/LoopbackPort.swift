import Foundation

/// Loopback TCP ports for servers the tests start as child processes (which, unlike our own
/// servers, cannot hand back the port they bound to 0).
public enum LoopbackPort {
    /// Could not find or probe a port.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// A port that was free a moment ago: the kernel's choice for port 0 on 127.0.0.1, released at
    /// once. Another process could take it before the child binds it; the kernel hands out ports
    /// in turn, so that is rare, and the child's start then fails loudly rather than silently.
    public static func free() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket(): errno \(errno)") }
        defer { close(descriptor) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw Failure(description: "bind(127.0.0.1:0): errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw Failure(description: "getsockname(): errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts a TCP connection on 127.0.0.1:`port` now.
    public static func acceptsConnections(_ port: Int) -> Bool {
        acceptsConnections(port, host: "127.0.0.1")
    }

    /// Whether something accepts a TCP connection on `host` (an IPv4 address: a broker in a
    /// network namespace, reached over a bridge) port `port` now.
    public static func acceptsConnections(_ port: Int, host: String) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = loopback(port: port)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return false }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return connected == 0
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// A listener on 127.0.0.1 whose accept queue is full, so that the kernel drops every further
    /// SYN: a connection to it waits as one to a host that never answers would. Close it with
    /// ``close()``.
    public struct BlackHole: Sendable {
        /// Its port.
        public let port: Int
        private let listening: Int32
        private let queued: Int32

        public init() throws {
            listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = loopback(port: 0)
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let listening = self.listening
            let listens = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    bind(listening, address, length) == 0 && listen(listening, 0) == 0 && getsockname(listening, address, &length) == 0
                }
            }
            guard listens else {
                _ = Glibc.close(listening)
                throw Failure(description: "cannot listen on 127.0.0.1: errno \(errno)")
            }
            port = Int(UInt16(bigEndian: address.sin_port))
            // A backlog of 0 queues one connection: this one fills the queue and is never accepted.
            queued = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            let queued = self.queued
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(queued, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard connected else {
                _ = Glibc.close(queued)
                _ = Glibc.close(listening)
                throw Failure(description: "cannot fill the accept queue: errno \(errno)")
            }
        }

        /// Closes the listener and its queued connection.
        public func close() {
            _ = Glibc.close(queued)
            _ = Glibc.close(listening)
        }
    }
}

