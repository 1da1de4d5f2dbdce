import Dispatcher
import DispatcherService
import Foundation
import JSON
import Kafka
import Records

extension Scenarios {
    /// Live Activities on partitioned state (docs/worker.md, "Partitioned state"): `serve` in a
    /// process of its own starts `count` activities (a tenth of them subscribed to one channel),
    /// then one broadcast fans out to the subscribers. Reports each phase's rate and `serve`'s CPU
    /// (user + system, from /proc) per record, and its peak resident memory with every activity held.
    static func liveActivities(_ kafka: BenchKafka, count: Int) async throws -> JSONValue {
        let topics = try await kafka.makeTopics("live")
        let bundleID = "com.example.live"
        let channel = "YmVuY2g="
        let subscribers = count / 10
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: kafka.bootstrapServers), logger: kafka.logger)
        _ = try await producer.send(
            ProducerRecord(topic: topics.channels, key: Array(channel.utf8), value: Array(#"{"bundleId":"\#(bundleID)"}"#.utf8)))
        await producer.shutdown()
        let starts = (0..<count).map { index in
            let subscription = index < subscribers ? #","input-push-channel":"\#(channel)""# : ""
            return BenchRequest(
                key: BenchRequest.deviceToken(index),
                headers: [
                    RecordHeader(name: "apns-topic", value: "\(bundleID).push-type.liveactivity"),
                    RecordHeader(name: "apns-push-type", value: "liveactivity"),
                    RecordHeader(name: "apns-priority", value: "5"),
                ],
                value: Array(#"{"aps":{"event":"start","timestamp":1900000000,"attributes-type":"Match","attributes":{"n":\#(index)},"content-state":{"score":"0-0"},"alert":"Kick-off"\#(subscription)}}"#.utf8),
                apnsID: "")
        }
        try await kafka.preload(starts, topic: topics.requests)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let apps = "  \(bundleID):\n    entitlements: [broadcast]\n"
        let worker = try startServe(
            binary: try ProductBinary.beside(), bootstrap: kafka.bootstrapServers, groupId: "bench-live-\(UUID().uuidString.prefix(8))",
            topics: topics, apps: apps,
            // Every hop (request, command, delivery) waits on an empty fetch at most this long.
            properties: ["fetch.wait.max.ms": "10"], in: directory)
        // Phase 1: every start, most of them forwarded to their activity's owner.
        let startPhase = Throughput.Start()
        let cpuBefore = processCPUSeconds(worker.pid)
        try await countDeliveries(kafka, topic: topics.deliveries, until: count, limit: .seconds(900), unlessExited: worker)
        let started = startPhase.finish(records: count)
        let startCPU = processCPUSeconds(worker.pid) - cpuBefore
        // The broadcast goes once the worker's index of subscriptions holds every activity.
        try await waitForIndex(kafka, topic: topics.metrics, count: count, limit: .seconds(300), unlessExited: worker)

        // Phase 2: one broadcast to the channel, one command and one delivery per subscriber,
        // counted by a reader of the deliveries topic that caught up before the broadcast went.
        var readerConfiguration = ConsumerConfiguration(bootstrapServers: kafka.bootstrapServers, groupID: "unused")
        readerConfiguration.properties["fetch.wait.max.ms"] = "10"
        let deliveries = try KafkaTopicReader(configuration: readerConfiguration, topic: topics.deliveries, logger: kafka.logger)
        var events = deliveries.events.makeAsyncIterator()
        var read = 0
        var caughtUp = false
        while !caughtUp, let event = await events.next() {
            if case .messages(let messages) = event { read += messages.count }
            if case .caughtUp = event { caughtUp = true }
        }
        let broadcastProducer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: kafka.bootstrapServers), logger: kafka.logger)
        let fanOutPhase = Throughput.Start()
        let cpuBeforeFanOut = processCPUSeconds(worker.pid)
        _ = try await broadcastProducer.send(
            ProducerRecord(
                topic: topics.requests, key: Array(channel.utf8),
                value: Array(#"{"aps":{"event":"update","timestamp":1900000100,"content-state":{"score":"1-0"}}}"#.utf8),
                headers: [
                    RecordHeader(name: "apns-topic", value: bundleID), RecordHeader(name: "apns-push-type", value: "liveactivity"),
                    RecordHeader(name: "apns-channel-id", value: channel), RecordHeader(name: "apns-priority", value: "5"),
                ]))
        await broadcastProducer.shutdown()
        let fanOutDeadline = ContinuousClock.now + .seconds(600)
        while read < count + subscribers, ContinuousClock.now < fanOutDeadline, worker.exitUsage() == nil, let event = await events.next() {
            if case .messages(let messages) = event { read += messages.count }
        }
        let fannedOut = fanOutPhase.finish(records: subscribers)
        let fanOutCPU = processCPUSeconds(worker.pid) - cpuBeforeFanOut
        await deliveries.close()
        guard read >= count + subscribers else {
            _ = try? await worker.stop()
            throw BenchError("the broadcast reached \(read - count) of \(subscribers) subscribers")
        }
        let peak = peakResidentMegabytes(of: worker.pid)
        _ = try await worker.stop()

        let startMicroseconds = startCPU / Double(max(count, 1)) * 1e6
        let fanOutMicroseconds = fanOutCPU / Double(max(subscribers, 1)) * 1e6
        print(String(format: "live starts  %9.0f records/s (%d activities, %.0f µs CPU of serve per start)", started.perSecond, count, startMicroseconds))
        print(String(format: "fan-out      %9.0f deliveries/s (1 broadcast to %d, %.0f µs CPU of serve per delivery); peak RSS of serve %.0f MB",
                     fannedOut.perSecond, subscribers, fanOutMicroseconds, peak))
        return .object(JSONObject([
            ("recordsPerSecond", .number(JSONNumber(started.perSecond))), ("cpuMicrosecondsPerStart", .number(JSONNumber(startMicroseconds))),
            ("fanOutPerSecond", .number(JSONNumber(fannedOut.perSecond))), ("cpuMicrosecondsPerFanOut", .number(JSONNumber(fanOutMicroseconds))),
            ("activities", .number(JSONNumber(count))), ("subscribers", .number(JSONNumber(subscribers))),
            ("peakResidentMegabytes", .number(JSONNumber(peak))),
        ]))
    }

    /// Waits until the worker's latest snapshot on the metrics topic shows `count` activities in
    /// its index of subscriptions.
    private static func waitForIndex(
        _ kafka: BenchKafka, topic: String, count: Int, limit: Duration, unlessExited worker: BenchChild
    ) async throws {
        let consumer = try KafkaConsumer(
            configuration: ConsumerConfiguration(bootstrapServers: kafka.bootstrapServers, groupID: "bench-index-\(UUID().uuidString.prefix(8))"),
            logger: kafka.logger)
        try consumer.subscribe(topics: [topic])
        let deadline = ContinuousClock.now + limit
        var failure: BenchError?
        reading: for await event in consumer.events {
            if ContinuousClock.now > deadline { failure = BenchError("the activity index did not reach \(count) within \(limit)") }
            if worker.exitUsage() != nil { failure = BenchError("serve exited\(worker.logTail)") }
            if failure != nil { break }
            guard case .messages(let messages) = event else { continue }
            for message in messages {
                guard let value = message.value, let snapshot = try? MetricsSnapshot(jsonBytes: value) else { continue }
                if (snapshot.state?.activityIndex ?? 0) >= count { break reading }
            }
        }
        await consumer.close()
        if let failure { throw failure }
    }
}

/// The resolution of ``processCPUSeconds(_:)``: `/proc` counts CPU time in clock ticks (10 ms).
let processCPUTick = 1 / Double(sysconf(Int32(_SC_CLK_TCK)))

/// CPU seconds (user + system) a running process has used so far, from `/proc/<pid>/stat`, in
/// steps of ``processCPUTick``; 0 when it cannot be read.
func processCPUSeconds(_ pid: Int32) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let afterName = stat.lastIndex(of: ")")
    else { return 0 }
    // Fields after the name: state is the 3rd field of the line; utime and stime the 14th and 15th.
    let fields = stat[stat.index(after: afterName)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) * processCPUTick
}
