import Dispatcher
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// `dev`, the README's first command, through the built binary: run from a folder that is not the
/// repository (as from a fresh clone's build, or a container), its configuration and samples are
/// built in; it feeds requests and responses and accounts for every one, on its embedded broker or
/// on any other (`--bootstrap`).
@Suite("dev command (built binary)")
struct DevCommandTests {
    static let root = BuiltBinary.packageRoot()

    /// A new empty folder, removed after `body`.
    static func withEmptyFolder<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nd-dev-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try await withCleanUp(of: folder, { try? FileManager.default.removeItem(at: $0) }, body)
    }

    @Test("dev --count N from an empty folder: the embedded broker, its bootstrap line, N records accounted for, examples, a summary, exit 0")
    func demoFromAnywhere() async throws {
        // `dev` feeds the records of the state tables (devices, channels) first, uncounted, then the requests and responses.
        let samples = try DemoTally.sampleLines()
        let fed = samples.filter { !DemoTally.isState($0) }
        // Enough samples to reach the first responses (Config/samples/responses.jsonl comes after the requests).
        let firstResponse = try #require(fed.firstIndex { $0.contains(#""topic":"notifications.responses""#) })
        let count = firstResponse + 5
        try #require(fed.count >= count, "only \(fed.count) samples")
        let expected = try await DemoTally.offline(samples: samples, count: count).ranges
        #expect(expected["actions"]!.lowerBound > 0)
        let run = try await Self.withEmptyFolder { folder in
            try await BuiltBinary.run(["dev", "--count", "\(count)"], in: folder, limit: .seconds(180))
        }
        #expect(run.status == 0, "\(run.standardError)")
        let lines = run.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "configuration: built in (a copy of Config/dispatcher.yaml); --config FILE to use another")
        let bootstrap = try #require(lines.first { $0.hasPrefix("bootstrap: ") })
        #expect(bootstrap.wholeMatch(of: /bootstrap: 127\.0\.0\.1:\d+(,127\.0\.0\.1:\d+)*/) != nil, "\(bootstrap)")
        // The demo's metrics and health, on loopback, on a port of its own (never serve's 9090).
        let operations = try #require(lines.first { $0.hasPrefix("operations: ") }, "\(run.standardOutput.prefix(2_000))")
        #expect(operations.wholeMatch(of: /operations: http:\/\/127\.0\.0\.1:\d+\/metrics, \/health\/live, \/health\/ready/) != nil, "\(operations)")
        #expect(!operations.contains(":9090/"))
        // Every record fed came out as exactly what `dispatch` makes of it (a delivery, an action
        // record or a dead letter, then any launch): nothing lost, nothing extra, but for a
        // broadcast's deliveries to activities started just before it (``DemoTally``).
        let done = try #require(lines.last)
        #expect(done.hasPrefix("done: fed \(count) | in \(count) | "), "\(done)")
        #expect(done.contains(" | in flight 0"), "\(done)")
        let counts = try #require(DemoTally.summaryCounts(done), "\(done)")
        for (name, range) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(range.contains(counts[name]!), "\(name): \(counts[name]!), expected \(range); \(done)")
        }
        // One example of each outcome, read back from the broker's topics, printed as `dispatch` prints records.
        for outcome in [
            "modified delivery", "original delivery", "discarded delivery", "action record", "dead letter", "feedback record", "launch",
            "Live Activity start", "Live Activity update", "Live Activity end", "broadcast delivery", "activities record",
            // Sections 20 and 22: Config/samples/notification-settings.jsonl and memory-limit.jsonl.
            "quiet delivery (notification list only: provisional authorization)",
            "delivery to a user who did not authorize notifications", "extension stopped for its memory",
        ] {
            let heading = try #require(lines.firstIndex { $0.hasPrefix("First \(outcome), as written to notifications.") }, "\(outcome)")
            let record = try JSONValue(parsing: Array(lines[heading + 1].trimmingCharacters(in: .whitespaces).utf8))
            #expect(record[path: ["topic"]]?.stringValue?.hasPrefix("notifications.") == true)
        }
        #expect(!run.standardError.contains("Error Domain"))
    }

    @Test("the built-in samples are Config/samples: every file, in name order")
    func builtInSamples() async throws {
        let run = try await Self.withEmptyFolder { folder in
            try await BuiltBinary.run(["dev", "--count", "0", "--brokers", "1", "--partitions", "1"], in: folder, limit: .seconds(120))
        }
        #expect(run.status == 0, "\(run.standardError)")
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Config/samples").path)
            .filter { $0.hasSuffix(".jsonl") }.sorted()
        let lines = try DemoTally.sampleLines()
        #expect(files.contains("responses.jsonl"))
        #expect(run.standardOutput.contains("samples: \(lines.count) records, built in: \(files.joined(separator: ", "))\n"))
        #expect(run.standardOutput.contains("done: fed 0 | in 0 |"))
    }

    @Test("a missing --config or --samples reads as one sentence naming the path and the option, exit 2")
    func missingFiles() async throws {
        try await Self.withEmptyFolder { folder in
            let config = try await BuiltBinary.run(["dev", "--config", "Config/dispatcher.yaml"], in: folder)
            #expect(config.status == 2)
            #expect(config.standardError == "The configuration file Config/dispatcher.yaml (relative to \(folder.path)) does not exist; set it with --config.\n")
            let samples = try await BuiltBinary.run(["dev", "--samples", "Config/samples", "--count", "0"], in: folder)
            #expect(samples.status == 2)
            #expect(samples.standardError == "The samples folder Config/samples (relative to \(folder.path)) does not exist; set it with --samples.\n")
            // serve's default is Config/dispatcher.yaml in the working folder: the same sentence.
            let serve = try await BuiltBinary.run(["serve"], in: folder)
            #expect(serve.status == 2)
            #expect(serve.standardError.contains("The configuration file Config/dispatcher.yaml (relative to"))
            #expect(!serve.standardError.contains("NSCocoaErrorDomain"))
            let send = try await BuiltBinary.run(
                ["send", "--bootstrap", "127.0.0.1:1", "--token", "ab", "--topic", "t", "payload.json"], in: folder)
            #expect(send.status == 1)
            #expect(send.standardError.contains("The payload file payload.json (relative to"))
            #expect(send.standardError.contains("does not exist; set it with the FILE argument."))
        }
    }

    @Test("parsing: --count, --rate, --brokers and --partitions are checked; --help names the built-in configuration")
    func parsing() async throws {
        for arguments in [["--count", "-1"], ["--rate", "0"], ["--brokers", "0"], ["--partitions", "0"]] {
            let run = try await BuiltBinary.run(["dev"] + arguments)
            #expect(run.status == 64, "\(arguments)")
        }
        let help = try await BuiltBinary.run(["dev", "--help"])
        #expect(help.status == 0)
        // The help is wrapped to the terminal's width: compare words.
        let words = help.standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("built into the binary, so it runs from any folder"))
    }

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
