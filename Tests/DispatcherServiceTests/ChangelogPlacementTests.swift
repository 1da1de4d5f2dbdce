import Dispatcher
import Foundation
import Kafka
import Logging
import Records
import Testing

@testable import DispatcherService

/// Where the worker writes the changelog records the rules give without a partition: in the
/// partition of their key's state, which is the partition a restore reads them from (docs/worker.md,
/// "Partitioned state").
@Suite("Changelog placement")
struct ChangelogPlacementTests {
    /// Partitioned state over topics of `partitions` partitions, keys placed by murmur2 (the default).
    static func state(partitions: Int32) throws -> PartitionedState {
        let state = PartitionedState(
            topics: .init(devices: "devices", channels: "channels", activities: "activities", stored: "stored", activityRepartition: "repartition"),
            requestsTopic: "requests", consumer: ConsumerConfiguration(bootstrapServers: "127.0.0.1:9", groupID: "placement"),
            logger: Logger(label: "placement") { _ in SwiftLogNoOpLogHandler() })
        let counts = Dictionary(uniqueKeysWithValues: ["requests", "devices", "activities", "stored", "repartition"].map { ($0, partitions) })
        try state.check(partitionCounts: counts, partitioner: "murmur2_random")
        return state
    }

    @Test("an activities record goes to its token's partition (an evicted activity's tombstone too); a stored record to its device's")
    func placement() throws {
        let state = try Self.state(partitions: 4)
        let keys = try #require(KeyPartitioner(name: "murmur2_random", partitionCount: 4))
        func partition(_ key: String) -> Int32 { keys.partition(of: Array(key.utf8)) }
        let tokens = (0..<64).map { String(format: "%064x", $0) }
        let here = tokens[0]
        // A dismissed activity of another partition this worker owns, dropped to make room.
        let evicted = try #require(tokens.first { partition($0) != partition(here) })
        let message = KafkaMessage(
            topic: "repartition", partition: partition(here), offset: 7, key: Array(here.utf8), value: [], headers: [], timestamp: nil)
        let started = OutputRecord(kind: .activity, topic: "activities", key: Array(here.utf8), headers: [], value: Array("{}".utf8))
        let tombstone = OutputRecord(kind: .activity, topic: "activities", key: Array(evicted.utf8), headers: [], value: nil)
        #expect(state.partition(ofChangelog: started, causedBy: message) == partition(here))
        #expect(state.partition(ofChangelog: tombstone, causedBy: message) == partition(evicted))
        // A stored record's key is `<token>/<bundle ID>`: its state is its device's, the partition
        // of the request or devices record (keyed by the token) that wrote it, wherever the whole
        // key would hash.
        let device = try #require(tokens.first { partition("\($0)/com.example.app") != partition($0) })
        let request = KafkaMessage(
            topic: "requests", partition: partition(device), offset: 3, key: Array(device.utf8), value: [], headers: [], timestamp: nil)
        let stored = OutputRecord(kind: .stored, topic: "stored", key: Array("\(device)/com.example.app".utf8), headers: [], value: nil)
        #expect(state.partition(ofChangelog: stored, causedBy: request) == partition(device))
    }
}
