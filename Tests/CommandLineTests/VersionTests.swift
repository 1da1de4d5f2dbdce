import Testing
import TestSupport

/// `--version` of the built binary: the libraries that decide which brokers it reaches and what a
/// record costs.
@Suite("version (built binary)")
struct VersionTests {
    @Test("--version names librdkafka 2.8 and jemalloc, the malloc the binary is linked to run on")
    func namesTheKafkaClientAndTheAllocator() async throws {
        let run = try await BuiltBinary.run(["--version"])
        #expect(run.status == 0)
        #expect(run.standardOutput.hasPrefix("notification-dispatcher, librdkafka 2.8"))
        // Linked in Package.swift; glibc's malloc here would mean the link or the image lost it.
        #expect(run.standardOutput.contains(", malloc: jemalloc 5."), "\(run.standardOutput)")
    }
}
