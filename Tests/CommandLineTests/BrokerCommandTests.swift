import Foundation
import Testing
import TestSupport

/// The `broker` subcommand, run as the built binary.
@Suite struct BrokerCommandTests {
    @Test(.enabled(if: Executable.isInstalled("kcat"), "lists the broker's topics with kcat"), arguments: [SIGTERM, SIGINT])
    func brokerAnnouncesItsAddressServesTheProductTopicsAndExitsCleanlyOnSignal(signal: Int32) async throws {
        let binary = try BuiltBinary.path()
        let bootstrapFile = FileManager.default.temporaryDirectory.appendingPathComponent("bootstrap-\(UUID().uuidString.prefix(8).lowercased())").path
        defer { try? FileManager.default.removeItem(atPath: bootstrapFile) }
        let broker = try ChildProcess(binary, ["broker", "--brokers", "2", "--partitions", "3", "--bootstrap-file", bootstrapFile])

        try await eventually("the bootstrap line") { broker.outputSoFar.contains("bootstrap: ") && broker.outputSoFar.contains("\n") }
        let line = try #require(broker.outputSoFar.split(separator: "\n").first { $0.hasPrefix("bootstrap: ") })
        let address = String(line.dropFirst("bootstrap: ".count))
        #expect(address.split(separator: ",").count == 2)
        #expect(try String(contentsOfFile: bootstrapFile, encoding: .utf8) == address + "\n")

        let listing = try await ChildProcess.run(Executable.require("kcat"), ["-L", "-J", "-b", address])
        #expect(listing.status == 0)
        let metadata = try #require(try JSONSerialization.jsonObject(with: Data(listing.output.utf8)) as? [String: Any])
        let topics = try #require(metadata["topics"] as? [[String: Any]])
        let names = Set(topics.compactMap { $0["topic"] as? String })
        #expect(
            names == [
                "notifications.requests", "notifications.deliveries", "notifications.launches",
                "notifications.dead-letter", "notifications.metrics", "notifications.app-states",
                "notifications.responses", "notifications.actions", "notifications.feedback", "notifications.devices",
                "notifications.channels", "notifications.activities", "notifications.stored",
                "notifications.activities-repartition", "notifications.badges",
            ])
        #expect(names.contains("notifications.app-states"))
        for topic in topics {
            #expect((topic["partitions"] as? [Any])?.count == 3)
        }

        broker.send(signal: signal)
        let exit = try await broker.waitForExit()
        #expect(exit.exitedNormally)
        #expect(exit.status == 0)
    }

    @Test(arguments: [["--brokers", "0"], ["--partitions", "0"], ["--brokers", "many"], ["--no-such-option"]])
    func invalidOptionsAreRejectedWithAUsageError(arguments: [String]) async throws {
        let exit = try await ChildProcess.run(try BuiltBinary.path(), ["broker"] + arguments)
        #expect(exit.exitedNormally)
        #expect(exit.status == 64)  // EX_USAGE, swift-argument-parser's validation failure
        #expect(!exit.output.contains("bootstrap:"))
    }

    @Test func helpNamesEveryOption() async throws {
        let exit = try await ChildProcess.run(try BuiltBinary.path(), ["broker", "--help"])
        #expect(exit.status == 0)
        for option in ["--brokers", "--partitions", "--bootstrap-file"] {
            #expect(exit.output.contains(option))
        }
    }
}
