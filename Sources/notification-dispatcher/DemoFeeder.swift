import Dispatcher
import DispatcherTools
import Foundation
import Kafka
import Logging
import Notifications
import Records
import ServiceLifecycle
import Synchronization

/// Feeds the `dev` demo: the sample records (built in, or from `--samples`) first, then the
/// generated stream (requests and responses) at a steady rate, up to an optional count.
final class DemoFeeder: Service, Sendable {
    private let producer: KafkaProducer
    private let samples: [DemoTraffic.Request]
    /// The state topics (app states, devices, channels, badges): records sent there update the
    /// worker's tables and are not counted as fed, since they produce no output to account for.
    private let stateTopics: Set<String>
    /// The state topics whose records are part of the samples' story, fed in their place among
    /// the requests rather than first: a badge count reset between two pushes (section 21).
    private let inOrderTopics: Set<String>
    /// How many entries the worker's state tables hold now: the feeder waits for the sample state
    /// records to arrive there before it feeds the requests that read them.
    private let tableEntries: @Sendable () -> Int
    /// The partition every sample request goes to, nil for the producer's choice by key: the
    /// samples tell stories across keys (a Live Activity started under its push token, then
    /// updated under its activity token; a broadcast to the activities started before it), which
    /// one partition keeps in order, as `dispatch` reads them.
    private let pinnedPartition: Int32?
    /// Whether the worker is done with the first `n` pinned samples and with all they caused
    /// (Live Activity commands sent to their owner, the activity index): the feeder sends the next
    /// sample only then, so that each reads the state the ones before it left, as in `dispatch`.
    private let isSettled: @Sendable (Int) -> Bool
    private let traffic: DemoTraffic
    private let rate: Double
    private let limit: Int?
    private let produced = Mutex(0)
    private let logger: Logger

    /// - Parameters:
    ///   - samples: records read from the sample files.
    ///   - rate: generated records (requests and responses) per second.
    ///   - limit: records to feed in all (samples first); `nil` feeds until shutdown.
    init(
        producer: KafkaProducer, samples: [DemoTraffic.Request], traffic: DemoTraffic,
        rate: Double, limit: Int?, logger: Logger, stateTopics: Set<String> = [], inOrderTopics: Set<String> = [],
        tableEntries: @escaping @Sendable () -> Int = { 0 }, pinnedPartition: Int32? = nil,
        isSettled: @escaping @Sendable (Int) -> Bool = { _ in true }
    ) {
        self.isSettled = isSettled
        self.producer = producer
        self.samples = samples
        self.stateTopics = stateTopics
        self.inOrderTopics = inOrderTopics
        self.tableEntries = tableEntries
        self.pinnedPartition = pinnedPartition
        self.traffic = traffic
        self.rate = rate
        self.limit = limit
        self.logger = logger
    }

    /// Records produced so far.
    var count: Int { produced.withLock { $0 } }

    /// Whether every record to feed was produced (never, without a limit).
    var isFinished: Bool { limit.map { count >= $0 } ?? false }

    func run() async throws {
        let limit = self.limit ?? .max
        // State records go first, and the requests wait (up to 30 s) until the worker's tables hold
        // an entry per token they set, so the samples come out as `dispatch` makes them.
        var tokens: [String: Set<[UInt8]>] = [:]
        for sample in samples where stateTopics.contains(sample.topic) && !inOrderTopics.contains(sample.topic) {
            try await send(sample)
            if sample.value.isEmpty || sample.value == Array("null".utf8) {
                tokens[sample.topic, default: []].remove(sample.key ?? [])
            } else {
                tokens[sample.topic, default: []].insert(sample.key ?? [])
            }
        }
        let expected = tokens.values.reduce(0) { $0 + $1.count }
        let clock = ContinuousClock()
        let giveUp = clock.now + .seconds(30)
        while tableEntries() < expected, clock.now < giveUp, !Task.isCancelled {
            try? await clock.sleep(for: .milliseconds(20))
        }
        // The samples fed in order: requests and responses, up to the limit, with the state
        // records of their story among them (not counted: they produce nothing to account for).
        var requests: [DemoTraffic.Request] = []
        var fed = 0
        for sample in samples where !stateTopics.contains(sample.topic) || inOrderTopics.contains(sample.topic) {
            let counts = !stateTopics.contains(sample.topic)
            if counts, fed == limit { break }
            requests.append(sample)
            if counts { fed += 1 }
        }
        // Up to `window` sends await their acknowledgement at once: one at a time, the broker's
        // round trip (not the rate asked for) would set the pace.
        let window = 1_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            var outstanding = 0
            func submit(_ request: DemoTraffic.Request) async throws {
                if outstanding >= window {
                    try await group.next()
                    outstanding -= 1
                }
                group.addTask { try await self.send(request) }
                outstanding += 1
            }
            for (index, sample) in requests.enumerated() {
                guard !(Task.isCancelled || Task.isShuttingDownGracefully) else { return }
                if let pinnedPartition {
                    // One at a time: concurrent sends may reach the partition in any order.
                    try await send(sample, partition: pinnedPartition)
                    let giveUp = ContinuousClock.now + .seconds(30)
                    while !isSettled(index + 1), ContinuousClock.now < giveUp, !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(2))
                    }
                } else {
                    try await submit(sample)
                }
            }
            // Paced by the clock, not by a fixed sleep per record: a slow send is caught up.
            let clock = ContinuousClock()
            let start = clock.now
            let interval = Duration.seconds(1.0 / rate)
            var index = 0
            while fed + index < limit, !(Task.isCancelled || Task.isShuttingDownGracefully) {
                try await submit(traffic.record(index))
                index += 1
                try? await clock.sleep(until: start + interval * index)
            }
            try await group.waitForAll()
        }
    }

    private func send(_ request: DemoTraffic.Request, partition: Int32? = nil) async throws {
        // A state record without value, or with the JSON null, deletes its entry: a tombstone.
        let isTombstone = stateTopics.contains(request.topic) && (request.value.isEmpty || request.value == Array("null".utf8))
        let record = ProducerRecord(
            topic: request.topic,
            partition: partition,
            key: request.key,
            value: isTombstone ? nil : request.value,
            headers: request.headers.map { RecordHeader(name: $0.0, value: Array($0.1.utf8)) }
        )
        _ = try await producer.send(record)
        if !stateTopics.contains(request.topic) { produced.withLock { $0 += 1 } }
    }
}

extension DemoFeeder {
    /// Reads every `*.jsonl` file of a folder (in name order) as records: responses where a
    /// line's `topic` is the responses topic, requests otherwise.
    /// - Throws: `NamedFile.Problem` when the folder does not exist.
    static func loadSamples(directory: String, topics: TopicSettings) throws(NamedFile.Problem) -> [DemoTraffic.Request] {
        try NamedFile(role: "samples folder", path: directory, option: "--samples").requireFolder()
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".jsonl") }
            .sorted()
            .compactMap { name in FileManager.default.contents(atPath: directory + "/" + name).map { (directory + "/" + name, [UInt8]($0)) } }
        return samples(files, topics: topics)
    }

    /// The records of JSON-lines `files` (name, contents), in order: responses where a line's
    /// `topic` is the responses topic, requests otherwise.
    ///
    /// Lines that are not valid records are reported on standard error and skipped.
    static func samples(_ files: [(name: String, contents: [UInt8])], topics: TopicSettings) -> [DemoTraffic.Request] {
        var requests: [DemoTraffic.Request] = []
        for (name, contents) in files {
            for (number, line) in contents.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
                guard !JSONLines.isBlank(line) else { continue }
                do {
                    // The topic `dispatch` would take the line from: a response's, a state table's
                    // (app states, devices, channels, activities, badges), or the requests'.
                    let record = try JSONLines.decode(line, offset: number, topics: topics)
                    let (topic, _) = try JSONLines.decode(line, source: record.source)
                    let stateTopic = topic.flatMap {
                        [topics.appStates, topics.devices, topics.channels, topics.activities, topics.badges].compactMap { $0 }.contains($0)
                            ? $0 : nil
                    }
                    requests.append(
                        DemoTraffic.Request(
                            topic: stateTopic ?? record.source.topic,
                            key: record.key.map(Array.init),
                            headers: record.headers.map { ($0.name, String(decoding: $0.value ?? [], as: UTF8.self)) },
                            value: Array(record.value ?? [])
                        )
                    )
                } catch {
                    printError("\(name):\(number + 1): skipped: \(error)")
                }
            }
        }
        return requests
    }
}
