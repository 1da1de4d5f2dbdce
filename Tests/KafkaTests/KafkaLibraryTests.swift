import Kafka
import Testing

/// The librdkafka the project links, and the refusal of one too old to reach every broker.
@Suite struct KafkaLibraryTests {
    @Test func theLinkedLibraryIsAtLeast2_8AndPassesTheCheck() throws {
        #expect(KafkaLibrary.versionNumber >= 0x0208_0000, "linked librdkafka \(KafkaLibrary.version)")
        #expect(KafkaLibrary.version.hasPrefix("2."))
        try KafkaLibrary.checkSupported()
    }

    @Test(arguments: [(Int32(0x0200_02FF), "2.0.2"), (0x0201_01FF, "2.1.1"), (0x0202_0000, "2.2.0-RC1")])
    func aLibraryOlderThan2_2IsRefusedWithASentence(number: Int32, version: String) {
        do {
            try KafkaLibrary.check(versionNumber: number, version: version)
            Issue.record("librdkafka \(version) was accepted")
        } catch {
            #expect(error.message.contains("librdkafka \(version) is too old"))
            #expect(error.message.contains("2.2.0 or later"))
            #expect(error.message.contains("scripts/install-librdkafka"))
        }
    }

    @Test(arguments: [(Int32(0x0202_00FF), "2.2.0"), (0x0208_00FF, "2.8.0"), (0x0300_00FF, "3.0.0")])
    func versionsFrom2_2OnAreAccepted(number: Int32, version: String) throws {
        try KafkaLibrary.check(versionNumber: number, version: version)
    }
}
