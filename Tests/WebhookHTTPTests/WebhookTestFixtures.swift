import Foundation
import NIOSSL
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A self-signed certificate (P-256, valid for a day; by default for 127.0.0.1 and localhost),
/// made by `openssl` for the test that needs one: no key is kept in the repository.
struct SelfSignedCertificate {
    let certificate: NIOSSLCertificate
    let key: NIOSSLPrivateKey

    /// A certificate for `names` (an X.509 subjectAltName list).
    init(names: String = "IP:127.0.0.1,DNS:localhost") async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nd-tls-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("key.pem").path
        let certificateFile = directory.appendingPathComponent("certificate.pem").path
        let run = try await ProgramRun.run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", keyFile, "-out", certificateFile, "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=\(names)",
        ])
        try #require(run.status == 0, "openssl failed: \(run.standardError)")
        certificate = try #require(try NIOSSLCertificate.fromPEMFile(certificateFile).first)
        key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
    }
}

/// A loopback port that listens but never accepts, its accept queue already full: the kernel
/// drops further connection requests, so connecting to it hangs until the client gives up, as it
/// does to a webhook whose accept queue overflowed.
final class StalledListener {
    /// The port.
    let port: Int
    private var descriptors: [Int32] = []

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        descriptors.append(listener)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0)
        try #require(listen(listener, 0) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        // Fill the accept queue (a backlog of 0 holds one) with connections nobody accepts.
        for _ in 0..<2 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            descriptors.append(filler)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        usleep(100_000)
    }

    /// Closes the listener and the fillers.
    func close() {
        for descriptor in descriptors { _ = Glibc.close(descriptor) }
        descriptors = []
    }
}
