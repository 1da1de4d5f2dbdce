import Foundation
import Testing
import TestSupport

/// `dev` (the built binary): the demo feeds requests and responses and accounts for every one.
@Suite("dev command (built binary)")
struct DevCommandTests {
    @Test("with --count it feeds samples and generated records, responses among them, and stops once all are accounted for")
    func countedRun() async throws {
        let root = BuiltBinary.packageRoot()
        let exit = try await ChildProcess.run(
            try BuiltBinary.path(),
            [
                "dev", "--count", "300", "--rate", "3000", "--brokers", "1", "--partitions", "2",
                "--config", root.appendingPathComponent("Config/dispatcher.yaml").path,
                "--samples", root.appendingPathComponent("Config/samples").path,
            ],
            limit: .seconds(120))
        #expect(exit.exitedNormally && exit.status == 0, "\(exit.output.suffix(2_000))")
        #expect(exit.output.contains("notifications.responses"), "dev creates the responses topic")
        #expect(exit.output.contains("notifications.actions"), "dev creates the actions topic")
        let done = try #require(exit.output.split(separator: "\n").last { $0.hasPrefix("done: ") })
        let counts = try #require(DemoTally.summaryCounts(done), "\(done)")
        let (fed, consumed, modified, original, discarded) = (counts["fed"]!, counts["in"]!, counts["modified"]!, counts["original"]!, counts["discarded"]!)
        let (actions, app, byExtension, none, deadLetters) = (
            counts["actions"]!, counts["actions app"]!, counts["actions contentExtension"]!, counts["actions none"]!, counts["dead letters"]!
        )
        #expect(fed == 300 && consumed == 300)
        // One decision per record, but for a broadcast: one delivery per subscribed activity
        // (SEMANTICS section 15). The samples' broadcasts, decided offline as `dev` feeds them
        // (state records first, then the rest in order), say how many more or fewer that makes.
        // Every worker reads the channel subscriptions from the activities topic as it goes
        // (docs/worker.md, "Partitioned state"): a broadcast may miss an activity started just
        // before it, so its deliveries are bounded, not fixed.
        let offline = try await DemoTally.offline(samples: DemoTally.sampleLines(root: root), count: 300, root: root)
        let (surplus, fanOut) = (offline.surplus, offline.fanOutTotal)
        let decisions = modified + original + discarded + actions + deadLetters
        #expect(decisions <= 300 + surplus && decisions >= 300 + surplus - fanOut, "\(done); offline surplus \(surplus), fan-out \(fanOut)")
        #expect(app + byExtension + none == actions)
        #expect(app > 0 && byExtension > 0 && none > 0, "\(done)")
    }

    @Test(
        "with --bootstrap it runs on any broker: on Tansu it creates the topics and accounts for every record",
        .enabled(if: TansuBroker.isInstalled, "needs Tansu: scripts/install-tansu"))
    func onARealBroker() async throws {
        try await TansuBroker.with { broker in
            let root = BuiltBinary.packageRoot()
            let exit = try await ChildProcess.run(
                try BuiltBinary.path(),
                [
                    "dev", "--count", "100", "--rate", "1000", "--partitions", "2", "--bootstrap", broker.bootstrapServers,
                    "--config", root.appendingPathComponent("Config/dispatcher.yaml").path,
                ],
                limit: .seconds(180))
            #expect(exit.exitedNormally && exit.status == 0, "\(exit.output.suffix(2_000))")
            #expect(exit.output.contains("bootstrap: \(broker.bootstrapServers)"), "no embedded broker")
            let done = try #require(exit.output.split(separator: "\n").last { $0.hasPrefix("done: ") })
            let counts = try #require(DemoTally.summaryCounts(done), "\(done)")
            let (fed, consumed, modified, original, discarded) = (counts["fed"]!, counts["in"]!, counts["modified"]!, counts["original"]!, counts["discarded"]!)
            let (actions, deadLetters) = (counts["actions"]!, counts["dead letters"]!)
            #expect(fed == 100 && consumed == 100, "\(done)")
            let offline = try await DemoTally.offline(samples: DemoTally.sampleLines(root: root), count: 100, root: root)
            let (surplus, fanOut) = (offline.surplus, offline.fanOutTotal)
            let decisions = modified + original + discarded + actions + deadLetters
            #expect(decisions <= 100 + surplus && decisions >= 100 + surplus - fanOut, "\(done); offline surplus \(surplus), fan-out \(fanOut)")
        }
    }
}
