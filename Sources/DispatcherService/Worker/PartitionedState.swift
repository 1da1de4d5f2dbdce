import Dispatcher
import Foundation
import Kafka
import Logging
import Records
import Synchronization

/// The state of SEMANTICS sections 11.2 and 14 to 16 that one worker keeps, the way Kafka Streams
/// keeps a task's state (docs/worker.md, "Partitioned state").
///
/// - **Owned by partition**: the devices table, the activities, the stored notifications, the
///   badge ledger and the Live Activity budgets of the keys whose partitions the worker owns. The requests, devices,
///   activity-repartition, activities and stored topics are co-partitioned (checked at start) and
///   the group's `range` assignor gives partition *n* of each to one member, so one worker is the
///   only writer of a key's state. On every assignment (an eager rebalance hands out the whole
///   assignment) the tables are emptied and restored (``restore(assigned:committed:)``) before
///   any record is consumed: the activities and stored changelogs to their ends, the devices
///   topic to the group's committed offset (its records after it are consumed as events).
/// - **Read whole by every worker**: the channels table, and the activities changelog as the
///   index of who subscribes to which channel (a broadcast's fan-out is decided where the
///   broadcast is read; each subscribed activity's command then goes to its owner).
final class PartitionedState: Sendable {
    let topics: WorkerSettings.StateSettings
    let devices = DevicesTable()
    let activities: ActivitiesTable
    let stored: StoredNotifications
    /// The badge ledger (section 21), when an app keeps one.
    let badges: BadgesTable?
    let budgets = LiveActivityBudgets()
    let channels = ChannelsTable()
    /// Every worker's activities, from the activities topic read whole: only their channel
    /// subscriptions are read, for broadcasts.
    let activityIndex = ActivitiesTable(limit: Int(Int32.max))
    /// The requests topic's partition count and the key partitioner, learnt at start.
    private let layout = Mutex<KeyPartitioner?>(nil)
    /// Per devices or badges partition, the first offset not restored: a record below it was
    /// applied by the restore already (a devices partition's when the group had no committed
    /// offset and the restore read to the end; a badges partition's always, since its restore
    /// reads to the end).
    private let restoredEnds = Mutex<[TopicPartition: Int64]>([:])
    private let consumer: ConsumerConfiguration
    private let requestsTopic: String
    private let logger: Logger
    /// Whether the requests topic's keys are sampled to learn their partitioner.
    private let samplesRequestKeys: Bool
    /// State records refused (malformed), by topic: logged and ignored.
    let ignored = Mutex<[String: Int]>([:])
    /// The refusals of full tables already reported (``reportFullTables()``).
    private let reportedRefusals = Mutex((activities: 0, stored: 0, badges: 0))
    /// Restored records whose key belongs to another partition, by table, over every restore.
    private let misplaced = Mutex<[MisplacedRecords.Table: Int]>([:])
    /// The tables and partitions whose misplaced records were logged: each once in the worker's life.
    private let reportedPlaces = Mutex<Set<MisplacedRecords.Place>>([])
    /// The sample of the requests topic's keys, until it is whole and after (its finding).
    private let requestsSample = Mutex<PartitionerSample?>(nil)
    /// Whether the requests topic's keys are still sampled: what the consumer loop reads for
    /// each batch, without a lock, to leave records alone once the sample is whole.
    private let sampling = Atomic<Bool>(false)

    init(
        topics: WorkerSettings.StateSettings, requestsTopic: String, consumer: ConsumerConfiguration, logger: Logger,
        samplesRequestKeys: Bool = true
    ) {
        self.topics = topics
        self.samplesRequestKeys = samplesRequestKeys
        self.requestsTopic = requestsTopic
        self.consumer = consumer
        self.logger = logger
        activities = ActivitiesTable(limit: topics.limits.activities)
        stored = StoredNotifications(limit: topics.limits.stored)
        // The worker reads the badges topic it writes: its own records come back.
        badges = topics.badges.map { _ in BadgesTable(limit: topics.limits.badges, readsItsOwnChanges: true) }
    }

    /// The tables the rules read, with `appStates` and the request counts of section 12.3.
    func tables(appStates: any AppStateLookup, requestRates: RequestRateWindow?) -> StateTables {
        var tables = StateTables(appStates: appStates, devices: devices, requestRates: requestRates)
        tables.channels = channels
        tables.activities = activities
        tables.activityIndex = activityIndex
        tables.stored = stored
        tables.badges = badges
        tables.liveActivityBudgets = budgets
        return tables
    }

    /// Checks that every co-partitioned topic has as many partitions as the requests topic and
    /// learns how keys map to partitions (the producer's `partitioner`).
    /// - Throws: ``StateTopicsError`` naming the topics missing or partitioned differently.
    func check(partitionCounts counts: [String: Int32], partitioner: String) throws(StateTopicsError) {
        let needed = [requestsTopic] + topics.coPartitioned
        let missing = needed.filter { counts[$0] == nil }
        guard missing.isEmpty else { throw .missing(missing) }
        let expected = counts[requestsTopic] ?? 0
        let different = topics.coPartitioned.filter { counts[$0] != expected }
        guard different.isEmpty else {
            throw .notCoPartitioned(requests: requestsTopic, count: expected, others: different.map { ($0, counts[$0] ?? 0) })
        }
        guard let keys = KeyPartitioner(name: partitioner, partitionCount: expected) else {
            throw .partitioner(partitioner)
        }
        layout.withLock { $0 = keys }
        guard samplesRequestKeys else { return }
        requestsSample.withLock { $0 = PartitionerSample(keys: keys) }
        sampling.store(true, ordering: .releasing)
    }

    /// Samples the keys of the requests records in `batch` until the sample is whole (then one
    /// atomic load per batch): learns which partitioner the providers write requests with.
    func sampleRequests(of batch: ConsumedBatch) {
        guard sampling.load(ordering: .relaxed), let requests = batch.topicNames.firstIndex(of: requestsTopic) else { return }
        settle { sample in
            for index in 0..<batch.count where batch.topicIndex(at: index) == requests && !sample.isSettled {
                let partition = batch.partition(at: index)
                batch.withUnsafeKeyBytes(at: index) { key in
                    if let key { sample.add(key: key, partition: partition) }
                }
            }
        }
    }

    /// Samples the keys of the requests records among `messages` until the sample is whole.
    func sampleRequests(of messages: [KafkaMessage]) {
        guard sampling.load(ordering: .relaxed) else { return }
        settle { sample in
            for message in messages where message.topic == requestsTopic && !sample.isSettled {
                message.key?.withUnsafeBytes { sample.add(key: $0, partition: message.partition) }
            }
        }
    }

    /// Adds to the requests sample with `add`; the caller that completes it stops the sampling
    /// and reports the finding, once.
    private func settle(_ add: (inout PartitionerSample) -> Void) {
        let settled = requestsSample.withLock { sample -> PartitionerSample? in
            guard var whole = sample, !whole.isSettled else { return nil }
            add(&whole)
            sample = whole
            return whole.isSettled ? whole : nil
        }
        guard let settled, let finding = settled.finding else { return }
        sampling.store(false, ordering: .relaxed)
        switch finding {
        case .follows(let placement) where placement == settled.configured:
            logger.info(
                "the requests topic's keys are where the worker's partitioner puts them",
                metadata: [LogKey.topic: "\(requestsTopic)", "partitioner": "\(placement.rawValue)", "sampled": "\(settled.tally)"])
        case .follows(let placement):
            logger.warning(
                "\(requestsTopic) is keyed as \(placement.rawValue) places keys, not as this worker's partitioner \(settled.configured.rawValue) does (\(settled.tally) sampled keys where they were read): each Live Activity update keyed by its token then costs a forward, and its devices records must follow the same partitioner; set kafka.properties.partitioner to \(placement.rawValue), or have your providers write with \(settled.configured.rawValue)",
                metadata: [LogKey.topic: "\(requestsTopic)"])
        case .noneOfThem:
            logger.warning(
                "\(requestsTopic) is keyed by no one partitioner the worker knows (\(settled.tally) sampled keys where they were read): providers write with several partitioners, or to chosen partitions; each Live Activity update read elsewhere than where \(settled.configured.rawValue) puts its token costs a forward. Have every provider write with \(settled.configured.rawValue), or set kafka.properties.partitioner to the one they all use",
                metadata: [LogKey.topic: "\(requestsTopic)"])
        }
    }

    /// The partition that owns `activityToken`'s state: the one its key goes to.
    func partition(ofActivityToken activityToken: String) -> Int32 {
        let keys = layout.withLock { $0 }
        return keys?.partition(of: Array(activityToken.utf8)) ?? 0
    }

    /// The partition a changelog record caused by `message` goes to (an activities or stored
    /// record the rules wrote without a partition): the one whose restore must read it, its key's.
    ///
    /// An activities record goes to its activity token's partition. That is `message`'s for the
    /// activity a command changed (the command runs in its token's partition), but not always for
    /// the tombstone of a dismissed activity the full table dropped to make room
    /// (``ActivityChange/evicted``): it may be of any partition this worker owns. A stored record
    /// goes to `message`'s partition, its device's (a request or devices record keyed by the token).
    func partition(ofChangelog output: OutputRecord, causedBy message: KafkaMessage) -> Int32 {
        guard output.kind == .activity, let key = output.key, !key.isEmpty, let keys = layout.withLock({ $0 }) else {
            return message.partition
        }
        return keys.partition(of: Array(key))
    }

    /// Whether a devices or badges record was applied by the restore already.
    func isRestored(_ message: KafkaMessage) -> Bool {
        restoredEnds.withLock { $0[TopicPartition(topic: message.topic, partition: message.partition)].map { message.offset < $0 } ?? false }
    }

    /// How full the tables are now.
    var gauges: StateGauges {
        var gauges = StateGauges()
        gauges.activities = StateGauges.Table(activities.usage)
        gauges.stored = StateGauges.Table(stored.usage)
        if let badges { gauges.badges = StateGauges.Table(badges.usage) }
        gauges.devices = devices.count
        gauges.activityIndex = activityIndex.count
        gauges.recordsIgnored = ignored.withLock { $0 }
        gauges.misplacedRecords = Dictionary(uniqueKeysWithValues: misplaced.withLock { $0 }.map { ($0.key.rawValue, $0.value) })
        if let sample = requestsSample.withLock({ $0 }), let finding = sample.finding {
            gauges.requestsPartitioner = StateGauges.RequestsPartitioner(finding, configured: sample.configured)
        }
        return gauges
    }

    /// Logs, once per growth, that a table refused requests because it was full since the last
    /// report: the sign that `dispatch.stateLimits` is too low for this worker's share.
    func reportFullTables() {
        let now = (activities: activities.usage.refused, stored: stored.usage.refused, badges: badges?.usage.refused ?? 0)
        let before = reportedRefusals.withLock { reported in
            defer { reported = now }
            return reported
        }
        for (name, count, was, limit) in [
            ("activities", now.activities, before.activities, topics.limits.activities),
            ("stored", now.stored, before.stored, topics.limits.stored),
            ("badges", now.badges, before.badges, topics.limits.badges),
        ] where count > was {
            logger.warning(
                "the \(name) table is full: \(count - was) request(s) refused since the last report; raise dispatch.stateLimits.\(name) (\(limit) per worker) or run more workers",
                metadata: ["refused": "\(count)"])
        }
    }

    /// Counts and logs a state record refused.
    func ignore(_ message: KafkaMessage, name: String, problem: String) {
        ignored.withLock { $0[message.topic, default: 0] += 1 }
        logger.warning(
            "\(name) record ignored",
            metadata: [
                LogKey.topic: "\(message.topic)", LogKey.partition: "\(message.partition)",
                LogKey.offset: "\(message.offset)", LogKey.error: "\(problem)",
            ])
    }

    /// Empties the owned tables and restores those of the partitions just assigned (on the
    /// consumer's poll thread, before any of them is consumed: ``KafkaConsumer/BeforeAssign``).
    ///
    /// The activities, stored and badges changelogs are read to their ends; the devices topic to
    /// the group's committed offset, or when the group has none to its end (a new group starts
    /// from the table as it is, and skips those records when it consumes them). The group
    /// consumes the badges topic too, for the counts providers reset, and skips what the restore
    /// read.
    /// - Parameter timeout: the longest the attempt may take.
    /// - Returns: false when the restore failed (logged): the worker must not decide the
    ///   partitions' records on partial state.
    /// - Parameter waitsForOpenTransactions: whether a partition held back by a transaction left
    ///   open is read on until it ends (``ChangelogRestorer/restore(_:configuration:timeout:waitsForOpenTransactions:logger:apply:)``):
    ///   at an assignment (another member may have been killed with one open), not after the
    ///   worker aborted its own (nothing committed can follow it in its own partitions).
    func restore(
        assigned: [TopicPartition], committed: [TopicPartition: Int64], timeout: Duration, waitsForOpenTransactions: Bool = true
    ) -> Bool {
        let started = ContinuousClock.now
        devices.removeAll()
        activities.removeAll()
        stored.removeAll()
        badges?.removeAll()
        budgets.removeAll()
        let owned = assigned.filter { $0.topic == requestsTopic }.map(\.partition)
        var ranges: [ChangelogRestorer.Range] = []
        for partition in owned {
            ranges.append(.init(TopicPartition(topic: topics.activities, partition: partition)))
            ranges.append(.init(TopicPartition(topic: topics.stored, partition: partition)))
            if let badges = topics.badges { ranges.append(.init(TopicPartition(topic: badges, partition: partition))) }
        }
        for partition in assigned where partition.topic == topics.devices {
            ranges.append(.init(partition, end: committed[partition]))
        }
        var found = layout.withLock { $0 }.map(MisplacedRecords.init(keys:))
        do {
            let ends = try ChangelogRestorer.restore(
                ranges, configuration: consumer, timeout: timeout, waitsForOpenTransactions: waitsForOpenTransactions, logger: logger
            ) { message in
                let table = self.table(of: message)
                apply(message, to: table)
                found?.check(message, of: table)
            }
            restoredEnds.withLock { restored in
                restored = [:]
                for (partition, end) in ends {
                    if partition.topic == topics.devices && committed[partition] == nil || partition.topic == topics.badges {
                        restored[partition] = end
                    }
                }
            }
        } catch {
            logger.error(
                "cannot restore the state of the partitions assigned",
                metadata: [LogKey.partitions: "\(describe(assigned))", LogKey.error: "\(error)"])
            return false
        }
        if let found { report(found) }
        logger.info(
            "state restored",
            metadata: [
                LogKey.partitions: "\(owned.sorted().map(String.init).joined(separator: ","))",
                // Where the group's committed offsets start the partitions assigned ("none": a
                // new group): the question a repeated outcome after a rebalance asks first.
                LogKey.offsets: committed.isEmpty ? "none" : "\(committed.map { "\($0.key)@\($0.value)" }.sorted().joined(separator: ","))",
                "devices": "\(devices.count)", "activities": "\(activities.count)", "stored": "\(stored.count)",
                "badges": "\(badges?.count ?? 0)",
                "took": "\(ContinuousClock.now - started)",
            ])
        return true
    }

    /// The table a restored record belongs to.
    private func table(of message: KafkaMessage) -> MisplacedRecords.Table {
        switch message.topic {
        case topics.activities: .activities
        case topics.stored: .stored
        case topics.badges: .badges
        default: .devices
        }
    }

    /// Applies one restored record to its table; a malformed one is logged and ignored. A
    /// misplaced one is applied too (docs/worker.md, "Misplaced records"): it is where the
    /// requests of its key are when one partitioner wrote both.
    private func apply(_ message: KafkaMessage, to table: MisplacedRecords.Table) {
        switch table {
        case .activities:
            if case .invalid(let reason) = activities.apply(key: message.key, value: message.value) {
                ignore(message, name: "activities", problem: "\(reason)")
            }
        case .stored:
            if case .invalid(let reason) = stored.apply(key: message.key, value: message.value) {
                ignore(message, name: "stored", problem: "\(reason)")
            }
        case .devices:
            if case .invalid(let reason) = devices.apply(key: message.key, value: message.value) {
                ignore(message, name: "devices", problem: "\(reason)")
            }
        case .badges:
            if case .invalid(let reason)? = badges?.apply(key: message.key, value: message.value) {
                ignore(message, name: "badges", problem: "\(reason)")
            }
        }
    }

    /// Counts the misplaced records a restore found, and logs each table and partition holding
    /// some the first time: every restore reads them again, and would repeat the same warning.
    private func report(_ found: MisplacedRecords) {
        misplaced.withLock { totals in
            for (table, count) in found.counts { totals[table, default: 0] += count }
        }
        let new = reportedPlaces.withLock { reported in
            found.found.filter { reported.insert($0.key).inserted }
        }
        let places = new.sorted { ($0.key.partition.topic, $0.key.partition.partition) < ($1.key.partition.topic, $1.key.partition.partition) }
        for (place, records) in places {
            logger.warning(
                "\(found.warning(for: place, records))",
                metadata: [LogKey.topic: "\(place.partition.topic)", LogKey.partition: "\(place.partition.partition)", "misplaced": "\(records.count)"])
        }
    }
}

/// Why the worker cannot keep its partitioned state with the topics it found.
package enum StateTopicsError: Error, Sendable, CustomStringConvertible {
    /// These topics do not exist.
    case missing([String])
    /// These topics have a partition count other than the requests topic's.
    case notCoPartitioned(requests: String, count: Int32, others: [(String, Int32)])
    /// The producer's partitioner places keys in no reproducible partition.
    case partitioner(String)

    package var description: String {
        switch self {
        case .missing(let topics):
            "the state topics \(topics.joined(separator: ", ")) do not exist: create them (with as many partitions as the requests topic; `notification-dispatcher broker` and `dev` create every product topic), or set topics.devices to \"\" to run without the state of SEMANTICS 11.2 and 14-16"
        case .notCoPartitioned(let requests, let count, let others):
            "the state topics must have as many partitions as \(requests) (\(count)), so that one worker owns a key's requests and its state: "
                + others.map { "\($0.0) has \($0.1)" }.joined(separator: ", ")
        case .partitioner(let name):
            "the producer's partitioner \(name) does not place a key in one partition; use murmur2_random (the default), consistent_random or fnv1a_random"
        }
    }
}
