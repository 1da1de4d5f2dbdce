import Foundation
import Kafka
import Records
import Synchronization
import TestSupport
import Testing

/// What the worker's partitioned state stands on: the `range` assignor gives partition n of every
/// co-partitioned topic to one member, the restore runs before an assignment takes effect, the
/// restorer reads partitions to their end or to an offset, and keys land where `KeyPartitioner`
/// says.
@Suite struct PartitionedStateTests {
    @Test("under range, each member owns the same partition numbers of both topics; beforeAssign sees each assignment, with the committed offsets, before its messages")
    func rangeCoPartitionsAndRestoresFirst() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let (a, b) = (uniqueName("a"), uniqueName("b"))
        try cluster.createTopic(a, partitions: 4)
        try cluster.createTopic(b, partitions: 4)
        let group = uniqueName("group")
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        for partition in 0..<4 {
            _ = try await producer.send(ProducerRecord(topic: a, partition: Int32(partition), key: nil, value: "a".bytes))
        }
        await producer.shutdown()

        // The first member commits offset 1 of a[0]: a later assignment must see it.
        var configuration = ConsumerConfiguration.forTests(cluster, group: group)
        configuration.assignor = .range
        let seen = Mutex<[(partitions: Set<TopicPartition>, committed: [TopicPartition: Int64], messagesBefore: Int)]>([])
        let messages = Mutex(0)
        let first = ConsumerWatcher(
            try KafkaConsumer(configuration: configuration, logger: testLogger("first")) { partitions, committedOffsets in
                let committed = (try? committedOffsets()) ?? [:]
                seen.withLock { $0.append((Set(partitions), committed, messages.withLock { $0 })) }
                return true
            })
        try first.consumer.subscribe(topics: [a, b])
        let all = Set((0..<4).flatMap { [TopicPartition(topic: a, partition: $0), TopicPartition(topic: b, partition: $0)] })
        try await first.waitUntil("the first member owns every partition") { $0.assigned == all }
        try await first.waitUntil("the four records") { $0.messages.count == 4 }
        messages.withLock { $0 = 4 }
        try await first.consumer.commit([TopicPartitionOffset(topic: a, partition: 0, offset: 1)])
        #expect(seen.withLock { $0.count } == 1)
        #expect(seen.withLock { $0.first?.messagesBefore } == 0, "the hook ran before any message was handed over")

        let second = ConsumerWatcher(try KafkaConsumer(configuration: configuration, logger: testLogger("second")))
        try second.consumer.subscribe(topics: [a, b])
        try await second.waitUntil("the second member owns some partitions") { !$0.assigned.isEmpty }
        try await first.waitUntil("the partitions are split") { [second] in
            !$0.assigned.isEmpty && $0.assigned.isDisjoint(with: second.snapshot.assigned) && $0.assigned.union(second.snapshot.assigned) == all
        }
        for watcher in [first, second] {
            let owned = watcher.snapshot.assigned
            let numbersOfA = Set(owned.filter { $0.topic == a }.map(\.partition))
            let numbersOfB = Set(owned.filter { $0.topic == b }.map(\.partition))
            #expect(numbersOfA == numbersOfB, "partition n of both topics goes to one member")
        }
        // The first member's hook saw its new (eager: whole) assignment with a[0]'s commit, if it kept a[0].
        let last = try #require(seen.withLock { $0.last })
        #expect(last.partitions == first.snapshot.assigned)
        if last.partitions.contains(TopicPartition(topic: a, partition: 0)) {
            #expect(last.committed[TopicPartition(topic: a, partition: 0)] == 1)
        } else {
            #expect(last.committed[TopicPartition(topic: a, partition: 0)] == nil)
        }
        #expect(last.committed[TopicPartition(topic: b, partition: 0)] == nil, "no commit: absent")
        await second.consumer.close()
        await first.consumer.close()
    }

    @Test("a beforeAssign that holds its assignment: nothing of it is handed over or reported; the next rebalance gives it up at once, and the other member consumes the records")
    func heldAssignment() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("held")
        try cluster.createTopic(topic, partitions: 2)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        for partition in 0..<2 {
            for index in 0..<3 {
                _ = try await producer.send(ProducerRecord(topic: topic, partition: Int32(partition), key: nil, value: "r\(index)".bytes))
            }
        }
        await producer.shutdown()
        var configuration = ConsumerConfiguration.forTests(cluster, group: uniqueName("group"))
        configuration.assignor = .range
        let holds = Mutex<[Set<TopicPartition>]>([])
        // Releases nothing by itself: a revocation of held partitions reported to it would stall
        // the group's rebalance.
        let holder = ConsumerWatcher(
            try KafkaConsumer(configuration: configuration, logger: testLogger("holder")) { partitions, _ in
                holds.withLock { $0.append(Set(partitions)) }
                return false
            },
            releasesAtOnce: false)
        try holder.consumer.subscribe(topics: [topic])
        try await eventually("the first assignment held") { holds.withLock { $0.count } == 1 }

        let other = ConsumerWatcher(try KafkaConsumer(configuration: configuration, logger: testLogger("other")))
        try other.consumer.subscribe(topics: [topic])
        // Its partition's three records, perhaps read twice when it joins twice.
        try await other.waitUntil("the other member consumes its partition") { seen in
            guard seen.assigned.count == 1, let owned = seen.assigned.first else { return false }
            return Set(seen.messages(of: owned).map(\.offset)) == [0, 1, 2]
        }
        // At least one more round: the other member may join twice (its first join waits for the
        // topic's metadata, and the metadata's arrival makes it join again), so the holder may
        // be given its share in more than one round, each held.
        try await eventually("the holder held its share of the new assignment") { holds.withLock { $0.count } >= 2 }
        await holder.consumer.close()
        // Every record of both partitions, however many times: nothing was committed, so the
        // rebalance the holder's leaving starts (eager: the whole assignment goes and comes back)
        // has the other member read its own partition again from the beginning.
        let everyRecord = Set((0..<2).flatMap { partition in (0..<3).map { "\(partition):\($0)" } })
        try await other.waitUntil("the other member consumes both partitions once the holder left") {
            Set($0.messages.map { "\($0.partition):\($0.offset)" }) == everyRecord
        }
        let held = holder.snapshot
        #expect(held.messages.isEmpty, "nothing of a held assignment is handed over")
        #expect(held.assigned.isEmpty && held.taken.isEmpty, "a held assignment is never reported, nor its revocation")
        #expect(held.revoked.isEmpty)
        let seen = holds.withLock { $0 }
        #expect(seen.first == Set((0..<2).map { TopicPartition(topic: topic, partition: $0) }), "alone, it was given both")
        #expect(seen.dropFirst().allSatisfy { $0.count == 1 }, "then its share, in every later round: \(seen)")
        await other.consumer.close()
    }

    /// Both isolation levels: read_uncommitted, the partitions' ends are asked for all at once
    /// (ListOffsets, latest and earliest); read_committed, they are the ends the fetches report.
    @Test(
        "the restorer reads partitions from their beginning to their end or to an offset, tombstones included; an empty partition ends at once",
        arguments: [IsolationLevel.readCommitted, .readUncommitted])
    func restorerReadsToTheEnd(isolation: IsolationLevel) async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("changelog")
        try cluster.createTopic(topic, partitions: 3)
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers), logger: testLogger("producer"))
        for index in 0..<5 {
            _ = try await producer.send(ProducerRecord(topic: topic, partition: 0, key: "k\(index)".bytes, value: index == 4 ? nil : "v\(index)".bytes))
            _ = try await producer.send(ProducerRecord(topic: topic, partition: 1, key: "m\(index)".bytes, value: "w\(index)".bytes))
        }
        await producer.shutdown()
        var configuration = ConsumerConfiguration.forTests(cluster, group: uniqueName("unused"))
        configuration.isolationLevel = isolation
        func partition(_ number: Int32) -> TopicPartition { TopicPartition(topic: topic, partition: number) }
        let ranges: [ChangelogRestorer.Range] = [.init(partition(0)), .init(partition(1), end: 2), .init(partition(2))]
        // It blocks its thread, as on the consumer's poll thread: not on the test's.
        let (ends, messages) = try await Task.detached {
            var messages: [KafkaMessage] = []
            let ends = try ChangelogRestorer.restore(ranges, configuration: configuration, logger: testLogger("restore")) { messages.append($0) }
            return (ends, messages)
        }.value
        #expect(messages.filter { $0.partition == 0 }.map(\.offset) == [0, 1, 2, 3, 4])
        #expect(messages.filter { $0.partition == 0 }.last?.value == nil, "the tombstone is handed over")
        #expect(messages.filter { $0.partition == 1 }.map(\.offset) == [0, 1])
        #expect(messages.filter { $0.partition == 2 }.isEmpty)
        #expect(ends == [partition(0): 5, partition(1): 2])
    }

    @Test("a key's partition as KeyPartitioner computes it is the one librdkafka's producer writes it to, for murmur2_random and consistent_random")
    func keyPartitionerMatchesTheProducer() async throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 1)
        defer { cluster.shutdown() }
        let topic = uniqueName("keys")
        try cluster.createTopic(topic, partitions: 7)
        for name in ["murmur2_random", "consistent_random"] {
            var configuration = ProducerConfiguration(bootstrapServers: cluster.bootstrapServers)
            configuration.partitioner = name
            let producer = try KafkaProducer(configuration: configuration, logger: testLogger("producer"))
            let keys = try #require(KeyPartitioner(name: name, partitionCount: 7))
            var partitions = Set<Int32>()
            for index in 0..<40 {
                let key = Array(String(format: "%064x", index * 7_919).utf8)
                let report = try await producer.send(ProducerRecord(topic: topic, key: RecordBytes(key), value: "x".bytes))
                #expect(report.partition == keys.partition(of: key), "\(name), key \(index)")
                partitions.insert(report.partition)
            }
            #expect(partitions.count > 3, "the keys spread")
            await producer.shutdown()
        }
        #expect(KeyPartitioner(name: "random", partitionCount: 7) == nil)
    }
}
