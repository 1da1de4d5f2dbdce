import Dispatcher
import Foundation
import Kafka
import Logging
import Notifications
import Records
import Synchronization

/// The producer's handles on the topics a request decided on its view writes to, made once.
struct InPlaceTopics: Sendable {
    let deliveries: ProducerTopic
    let launches: ProducerTopic
    let deadLetter: ProducerTopic
    let feedback: ProducerTopic
    let badges: ProducerTopic

    /// The handles, nil when the producer no longer takes records.
    init?(producer: KafkaProducer, topics: TopicSettings) {
        guard let deliveries = producer.topic(named: topics.deliveries), let launches = producer.topic(named: topics.launches),
            let deadLetter = producer.topic(named: topics.deadLetter), let feedback = producer.topic(named: topics.feedback),
            let badges = producer.topic(named: topics.badges)
        else { return nil }
        self.deliveries = deliveries
        self.launches = launches
        self.deadLetter = deadLetter
        self.feedback = feedback
        self.badges = badges
    }

    /// The handle of an output's topic.
    subscript(topic: OutputBuffer.Topic) -> ProducerTopic {
        switch topic {
        case .deliveries: deliveries
        case .launches: launches
        case .deadLetter: deadLetter
        case .feedback: feedback
        case .badges: badges
        }
    }
}

extension DispatchWorker {
    /// Where the bytes of a request decided on a view lie: in its lent batch (most requests), or
    /// in the one copy kept of a request that waited behind its key.
    enum RecordSource: Sendable {
        /// The record at this index of the lent batch.
        case batch(Int)
        /// A record copied out of its batch.
        case owned(WorkItem)
    }

    /// A request decided on a view, between its first output's enqueueing and its end.
    struct InPlaceRecord: Sendable {
        /// Where its bytes lie.
        var source: RecordSource
        /// Its partition's index in the work's partition table.
        var partition: Int
        /// What the core needs to finish it.
        var inFlight: WorkerCore.InFlight
        /// What it was decided to be: its labels, the output that follows its first, its bytes.
        var written: Dispatcher.Written
        /// Its first output's slot in the work's outputs.
        var slot: Int
        /// The topic of its first output.
        var topic: OutputBuffer.Topic
        /// Its timestamp (milliseconds since 1970), for the latency metric.
        var timestamp: Int64?
    }

    /// What deciding requests on their views left to do: the outputs to await and the records to
    /// finish, and the records that go on the owned way.
    struct LentWork: Sendable {
        /// The lent batch the records' bytes lie in (nil for records copied out of theirs).
        var batch: ConsumedBatch?
        /// The partitions of the records.
        var partitions: WorkerCore.PartitionTable
        /// The first outputs of the records decided on views; nil when there are none.
        var outputs: LentOutputs?
        var records: [InPlaceRecord]
        var outputBytes: Int
        var receivedAt: Date
        /// Records that go on the owned way (they wait, or are not requests), copied out, in order.
        var owned: [WorkItem]

        /// Records a request whose first output was enqueued, and counts its outputs' bytes.
        mutating func record(_ record: consuming InPlaceRecord) {
            outputBytes += record.written.outputBytes
            records.append(record)
        }
    }

    /// Lends the record of `source` to `body` as a ``RecordView``: where librdkafka keeps it, or
    /// laid out from its copy.
    func withView<Result>(of source: RecordSource, in batch: ConsumedBatch?, _ body: (borrowing RecordView) -> Result) -> Result {
        switch source {
        case .batch(let index): batch!.withRecordView(at: index, body)
        case .owned(let item): item.withView(body)
        }
    }

    /// The record of `source` as a message of its own.
    func message(of source: RecordSource, in batch: ConsumedBatch?) -> KafkaMessage {
        switch source {
        case .batch(let index): batch!.message(at: index)
        case .owned(let item): item.message
        }
    }

    /// Takes a lent batch in (``WorkerCore/admit(_:at:into:queue:)``), decides each request that
    /// may start where it lies (``Dispatcher/decide(_:tables:now:into:)``) and hands its first
    /// output to the producer; copies out the records that wait or are not requests. Nothing
    /// suspends between taking a record in and producing its output, except for room in the
    /// producer's queue.
    ///
    /// - Parameter output: the buffers every record decided here is written into.
    /// - Returns: what is left to do, in tasks of its own (``completeInPlace(_:)`` and ``run(_:decided:)``).
    func take(_ batch: ConsumedBatch, output: inout OutputBuffer) async -> LentWork? {
        let (partitions, admissions) = admissions(of: batch)
        let requests = batch.topicNames.firstIndex(of: settings.requestsTopic)
        var effects = WorkerEffects()
        var admitted: [WorkerCore.Admitted]?
        while true {
            // Exactly-once: no record is taken in while a transaction commits (its drain would
            // otherwise wait for them too).
            let generation = progress.generation
            let now = ContinuousClock.now
            admitted = core.withLock { core -> [WorkerCore.Admitted]? in
                guard core.admitsRecords else { return nil }
                return core.admit(admissions, of: partitions, at: now, into: &effects) { index, epoch, generation in
                    // A record that waits behind its key: copied out (under the lock) so that
                    // the batch goes back to librdkafka once its own records are done. A
                    // request is copied as its view reads it, to be decided on that view when
                    // its turn comes; a record of another topic goes the owned way.
                    let content: WorkItem.Content =
                        batch.topicIndex(at: index) == requests ? .copy(batch.copy(at: index)) : .message(batch.message(at: index))
                    return WorkItem(
                        content: content, epoch: epoch, generation: generation, orderingKey: admissions[index].key,
                        bytes: admissions[index].bytes)
                }
            }
            if admitted != nil { break }
            await progress.wait(after: generation)
        }
        carryOut(effects)
        guard let admitted, let topics = inPlaceTopics else { return nil }
        var work = LentWork(
            batch: batch, partitions: partitions, outputs: nil, records: [], outputBytes: 0, receivedAt: Date(), owned: [])
        // Room for every record at once: grown by appending, the array copied its records (a
        // few hundred bytes each) again at every doubling.
        work.records.reserveCapacity(admitted.count)
        // Exactly-once: records refused in an aborted transaction become their dead letters the owned way.
        let refusals = recovery.hasRefusals
        // The keys of requests that did more than write one output, which later requests of the
        // same keys may not pass, and the requests of this batch started behind one of them.
        var closing = KeysClosing()
        for (index, outcome) in admitted.enumerated() {
            guard case .started(let epoch, let generation) = outcome else { continue }
            let admission = admissions[index]
            let inFlight = WorkerCore.InFlight(
                epoch: epoch, generation: generation, offset: admission.offset, key: admission.key, bytes: admission.bytes)
            if closing.hasClosed(admission.key) {
                // Started behind a request of this batch that closed its key: it waits after
                // all, copied as a request that waits behind its key is.
                closing.requeued.append(
                    WorkItem(
                        content: .copy(batch.copy(at: index)), epoch: epoch, generation: generation, orderingKey: admission.key,
                        bytes: admission.bytes))
                continue
            }
            guard batch.topicIndex(at: index) == requests,
                !refusals || !recovery.isRefused(partitions.partitions[admission.partition], offset: admission.offset)
            else {
                work.owned.append(WorkItem(message: batch.message(at: index), inFlight: inFlight))
                closing.close(admission.key)
                continue
            }
            let source = RecordSource.batch(index)
            switch await decide(source, partition: admission.partition, inFlight: inFlight, output: &output, topics: topics, into: &work) {
            case .written(let keepsKeyOpen):
                if !keepsKeyOpen { closing.close(admission.key) }
            case .waits(let wait):
                work.owned.append(WorkItem(message: batch.message(at: index), inFlight: inFlight, wait: wait))
                closing.close(admission.key)
            }
        }
        work.outputs?.close()
        if !closing.isEmpty {
            // Before the next batch is taken in: no later request of these keys starts behind them.
            let effects = core.withLock { $0.closeKeys(closing.keys, requeuing: closing.requeued) }
            work.owned += effects.start
        }
        if work.outputBytes > 0 { carryOut(core.withLock { $0.holding(outputBytes: work.outputBytes) }) }
        return work
    }

    /// The ordering keys a lent batch's requests closed (``WorkerCore/closeKeys(_:requeuing:)``),
    /// and the requests of the batch started behind them, which wait after all.
    private struct KeysClosing {
        private(set) var keys: [OrderingKey] = []
        private var closed: Set<OrderingKey> = []
        var requeued: [WorkItem] = []

        var isEmpty: Bool { keys.isEmpty && requeued.isEmpty }

        /// Whether `key` was closed by a request before, in this batch (most batches close none).
        func hasClosed(_ key: OrderingKey?) -> Bool {
            guard let key, !closed.isEmpty else { return false }
            return closed.contains(key)
        }

        mutating func close(_ key: OrderingKey?) {
            guard let key, closed.insert(key).inserted else { return }
            keys.append(key)
        }
    }

    /// Decides requests copied out of their batches (they waited behind their key, or met a
    /// refused output) on views of their copies, as ``take(_:output:)`` decides a lent batch's,
    /// and hands their first outputs to the producer.
    /// - Returns: what is left to do: their outputs to await (``completeInPlace(_:)``) and the
    ///   records that go on the owned way.
    func takeCopied(_ items: [WorkItem], output: inout OutputBuffer) async -> LentWork {
        var work = LentWork(
            batch: nil, partitions: WorkerCore.PartitionTable(), outputs: nil, records: [], outputBytes: 0, receivedAt: Date(), owned: [])
        guard let topics = inPlaceTopics else {
            work.owned = items
            return work
        }
        work.records.reserveCapacity(items.count)
        // Every one is a request (``decidesOnView``): its partition is told by its number. The
        // table checks its last entry too, but by a `TopicPartition`, whose topic string is a
        // retain to make for each record; here one is made per run of records of a partition.
        var lastPartition: (number: Int32, index: Int)?
        for item in items {
            let place = item.place
            let inFlight = WorkerCore.InFlight(
                epoch: item.epoch, generation: item.generation, offset: place.offset, key: item.orderingKey, bytes: item.bytes)
            let partition: Int
            if let last = lastPartition, last.number == place.partition {
                partition = last.index
            } else {
                partition = work.partitions.index(of: TopicPartition(topic: settings.requestsTopic, partition: place.partition))
                lastPartition = (place.partition, partition)
            }
            // Its key is closed already: a copy runs alone.
            if case .waits(let wait) = await decide(.owned(item), partition: partition, inFlight: inFlight, output: &output, topics: topics, into: &work) {
                work.owned.append(WorkItem(message: item.message, inFlight: inFlight, wait: wait))
            }
        }
        work.outputs?.close()
        if work.outputBytes > 0 { carryOut(core.withLock { $0.holding(outputBytes: work.outputBytes) }) }
        return work
    }

    /// What became of a request decided on its view.
    private enum ViewDecision {
        /// Its outputs are known: its first produced into the work (or, refused by the
        /// producer, it went the owned way). `keepsKeyOpen`: it awaits one output's
        /// acknowledgement and nothing more, so later requests of its key may start behind it.
        case written(keepsKeyOpen: Bool)
        /// It waits (nothing was produced for it).
        case waits(RequestWait)
    }

    /// Decides the request at `source` on its view and, when its outputs are known, produces the
    /// first into `work`.
    ///
    /// Inlined into its two callers: called, it cost an async call per request (the task's frame
    /// allocated and switched to), about 580 instructions a request under callgrind
    /// (docs/performance.md).
    @inline(__always)
    private func decide(
        _ source: RecordSource, partition: Int, inFlight: WorkerCore.InFlight, output: inout OutputBuffer, topics: InPlaceTopics,
        into work: inout LentWork
    ) async -> ViewDecision {
        // Decided and produced on one view of the record, unless the producer's queue is full:
        // then produced again, once there is room. The common end (enqueued at once) is
        // recorded inside the view's call, so that the decision's labels and following outputs
        // are moved into the record once rather than carried out in an enum and copied (with a
        // retain per reference they hold) on the way.
        let receivedAt = work.receivedAt
        let step = withView(of: source, in: work.batch) { view -> InPlaceStep in
            let decided = dispatcher.decide(view, tables: tables, now: receivedAt, into: &output)
            switch consume decided {
            case .waits(let wait):
                return .waits(wait)
            case .written(let written):
                let keepsKeyOpen = written.following.isEmpty
                let lent = work.outputs ?? producer.openLentOutputs(capacity: max(work.records.capacity, 1))
                work.outputs = lent
                let attempt = produce(&output, of: view, with: lent, topics: topics)
                guard case .enqueued(let slot) = attempt else {
                    return .pending(written, attempt, timestamp: view.timestampMilliseconds)
                }
                work.record(
                    InPlaceRecord(
                        source: source, partition: partition, inFlight: inFlight, written: written, slot: slot, topic: output.topic,
                        timestamp: view.timestampMilliseconds))
                return .enqueued(keepsKeyOpen: keepsKeyOpen)
            }
        }
        switch consume step {
        case .enqueued(let keepsKeyOpen):
            return .written(keepsKeyOpen: keepsKeyOpen)
        case .waits(let wait):
            return .waits(wait)
        case .pending(let written, let first, let timestamp):
            let keepsKeyOpen = written.following.isEmpty
            guard let lent = work.outputs else { preconditionFailure("written without outputs") }
            var attempt = first
            while case .queueFull = attempt {
                await lent.waitForQueueSpace()
                attempt = withView(of: source, in: work.batch) { view in produce(&output, of: view, with: lent, topics: topics) }
            }
            switch attempt {
            case .enqueued(let slot):
                // Nothing of its key was produced meanwhile: only the lent batches' requests
                // start behind it, and they are decided one batch after another, here.
                work.record(
                    InPlaceRecord(
                        source: source, partition: partition, inFlight: inFlight, written: written, slot: slot, topic: output.topic,
                        timestamp: timestamp))
                return .written(keepsKeyOpen: keepsKeyOpen)
            case .refused(let error):
                // The owned way meets the refusal as it meets every produce failure: decided
                // again (a request is counted against its token's limit once, whatever happens).
                metrics?.produceFailed(topic: topics[output.topic].name, error: error)
                work.owned.append(WorkItem(message: message(of: source, in: work.batch), inFlight: inFlight, replaying: true))
                return .written(keepsKeyOpen: false)
            case .queueFull:
                preconditionFailure("produced until the queue took it")
            }
        }
    }

    /// What became of a request decided on its view.
    private enum InPlaceStep {
        /// Decided, and its first output enqueued: recorded in the work already.
        /// `keepsKeyOpen`: no output follows it.
        case enqueued(keepsKeyOpen: Bool)
        /// Decided and its first output written, but not enqueued: the producer's queue was full
        /// or it refused the record.
        case pending(Dispatcher.Written, LentProduce, timestamp: Int64?)
        /// It waits.
        case waits(RequestWait)
    }

    /// Hands `output` (lent from `record`) to the producer.
    private func produce(
        _ output: inout OutputBuffer, of record: borrowing RecordView, with outputs: LentOutputs, topics: InPlaceTopics
    ) -> LentProduce {
        let topic = topics[output.topic]
        let partition = output.partition
        return output.withLent(from: record) { key, value, headers in
            outputs.produce(to: topic, partition: partition, key: key, value: value, headers: headers)
        }
    }

    /// Each record's admission: its partition (in the batch's partition table), offset, ordering
    /// key (made from its key where it lies) and bytes. A batch holds runs of one partition: each
    /// run's key hasher is made once.
    private func admissions(of batch: ConsumedBatch) -> (WorkerCore.PartitionTable, [WorkerCore.Admission]) {
        var table = WorkerCore.PartitionTable()
        var admissions: [WorkerCore.Admission] = []
        admissions.reserveCapacity(batch.count)
        let requests = batch.topicNames.firstIndex(of: settings.requestsTopic)
        var run: (topic: Int, number: Int32, index: Int, keys: OrderingPolicy.Keys)?
        for index in 0..<batch.count {
            let topic = batch.topicIndex(at: index)
            let number = batch.partition(at: index)
            if run?.topic != topic || run?.number != number {
                let partition = TopicPartition(topic: batch.topicNames[topic], partition: number)
                run = (topic, number, table.index(of: partition), orderingPolicy.keys(of: partition))
            }
            let sizes = batch.sizes(at: index)
            let key = batch.withUnsafeKeyBytes(at: index) { run!.keys.key(token: $0) }
            admissions.append(
                WorkerCore.Admission(
                    partition: run!.index, offset: batch.offset(at: index), key: key,
                    bytes: WorkItem.bytes(key: sizes.key, value: sizes.value, headerBytes: sizes.headerBytes, headers: sizes.headers),
                    pipelines: topic == requests))
        }
        return (table, admissions)
    }

    /// Awaits the acknowledgements of the first outputs of requests decided on views, writes the
    /// outputs that follow acknowledged ones (launches, feedback records) and awaits them, and
    /// finishes the records; a record whose output failed goes the owned way from where it
    /// failed, where it is retried or becomes a dead letter (``OutputPublisher``). A lent batch
    /// goes back to librdkafka when this ends.
    /// - Returns: the records that waited behind these for their keys and may start now.
    func completeInPlace(_ work: LentWork) async -> [WorkItem] {
        guard let lent = work.outputs, !work.records.isEmpty else { return [] }
        await lent.waitForAll()
        // The records done, by their index in `work.records`: a record is a few hundred bytes,
        // and sorting copies of them into lists cost more than the rest of this function.
        var done: [Int] = []
        done.reserveCapacity(work.records.count)
        var following: [Int] = []
        var replays: [(record: InPlaceRecord, written: Int, failure: KafkaError?)] = []
        // Read in place, field by field: `enumerated()` copied each record out, with a retain
        // per reference it holds, to read its slot.
        for position in work.records.indices {
            switch lent.outcome(ofSlot: work.records[position].slot) {
            case .success where !work.records[position].written.following.isEmpty: following.append(position)
            case .success: done.append(position)
            case .failure(let error):
                let record = work.records[position]
                metrics?.produceFailed(topic: inPlaceTopics?[record.topic].name ?? "", error: error)
                failedInPlace(error, of: record, in: work.partitions, output: record.topic)
                replays.append((record, 0, error))
            }
        }
        if !replays.isEmpty {
            // Written again the owned way: later requests of their keys wait for that from now
            // on. Those started behind them already were produced after them, and land before
            // the output written again (docs/worker.md, "Ordering").
            let keys = replays.compactMap(\.record.inFlight.key)
            _ = core.withLock { $0.closeKeys(keys, requeuing: []) }
        }
        // Counted by topic here, named once: a name per record was a string's copy each, and a
        // dictionary of topics a hash per record.
        var counts = OutputCounts()
        if !following.isEmpty, !Task.isCancelled {
            let (written, failed) = await writeFollowing(following, of: work)
            let failedPositions = Set(failed)
            done += following.filter { !failedPositions.contains($0) }
            for topic in written { counts.add(topic) }
            replays += failed.map { (work.records[$0], 1, nil) }
        }
        for position in done { counts.add(work.records[position].topic) }
        let outputs = counts.byName(dispatcher.configuration.topics)
        let replayed = replays.reduce(0) { $0 + $1.record.written.outputBytes }
        // Built with the labels of the core's parameter: an array of unlabelled tuples passed
        // there was cast element by element at run time.
        let records: [(partition: Int, record: WorkerCore.InFlight, labels: DispatchResult.Labels)] = done.map {
            (partition: work.records[$0].partition, record: work.records[$0].inFlight, labels: work.records[$0].written.labels)
        }
        let finished = core.withLock { core in
            core.finishInPlace(
                records, of: work.partitions, outputs: outputs, finishedTopic: settings.requestsTopic,
                outputBytes: work.outputBytes - replayed)
        }
        metrics?.observe(timestamps: done.compactMap { work.records[$0].timestamp })
        // Finishing records is progress too (as `publish` says).
        health?.loopRan()
        carryOut(finished)
        if !replays.isEmpty {
            await replay(replays, of: work, heldBytes: replayed)
        }
        return finished.start
    }

    /// Writes the outputs that follow the first of the records of `work` at `positions` (their
    /// first outputs acknowledged: launches, badges records, feedback records) and awaits them.
    /// - Returns: the topics of the outputs acknowledged, and the positions of the records one
    ///   of whose following outputs failed (they go the owned way from their second output).
    private func writeFollowing(_ positions: [Int], of work: LentWork) async -> (written: [OutputBuffer.Topic], failed: [Int]) {
        guard let topics = inPlaceTopics else { return ([], positions) }
        // A record may have several (a launch and a badges record).
        let count = positions.reduce(0) { $0 + work.records[$1].written.following.count }
        let outputs = producer.openLentOutputs(capacity: count)
        var output = OutputBuffer()
        // Each record's outputs' slots and topics, in order.
        var slots: [(position: Int, slot: Int?, topic: OutputBuffer.Topic)] = []
        slots.reserveCapacity(count)
        for position in positions {
            let record = work.records[position]
            for index in 0..<record.written.following.count {
                let following = record.written.following[index]
                var slot: Int?
                while true {
                    let attempt = withView(of: record.source, in: work.batch) { view in
                        dispatcher.writeFollowing(following, of: view, into: &output)
                        return produce(&output, of: view, with: outputs, topics: topics)
                    }
                    if case .queueFull = attempt {
                        await outputs.waitForQueueSpace()
                        continue
                    }
                    if case .enqueued(let enqueued) = attempt { slot = enqueued }
                    break
                }
                slots.append((position, slot, output.topic))
            }
        }
        outputs.close()
        await outputs.waitForAll()
        var written: [OutputBuffer.Topic] = []
        var failedPositions: Set<Int> = []
        var failed: [Int] = []
        for (position, slot, topic) in slots {
            if let slot, case .success = outputs.outcome(ofSlot: slot) {
                written.append(topic)
            } else {
                if let slot, case .failure(let error) = outputs.outcome(ofSlot: slot) {
                    failedInPlace(error, of: work.records[position], in: work.partitions, output: topic)
                }
                if failedPositions.insert(position).inserted { failed.append(position) }
            }
        }
        return (written, failed)
    }

    /// Records decided on views whose output failed, decided again the owned way (the same
    /// decision, unless the tables changed meanwhile; a request is counted against its token's
    /// limit once) and published from the output that failed: the owned path retries it, or
    /// writes the dead letter in its place.
    private func replay(_ replays: [(record: InPlaceRecord, written: Int, failure: KafkaError?)], of work: LentWork, heldBytes: Int) async {
        var decided: [Decided] = []
        var again: [WorkItem] = []
        for (record, written, failure) in replays {
            let item = WorkItem(message: message(of: record.source, in: work.batch), inFlight: record.inFlight, replaying: true)
            // Decided without waiting, as on its view (unless the tables changed meanwhile: a
            // device gone offline, say; then it goes the owned way from the start, at least once).
            guard case .decided(let result) = dispatcher.prepare(RequestRecord(item.message), tables: tables, now: work.receivedAt) else {
                again.append(item)
                continue
            }
            decided.append(Decided(item: item, result: result, written: written, failedBefore: failure))
        }
        // Their outputs' bytes are held as the owned path holds them (``publish(_:)``).
        carryOut(core.withLock { $0.holding(outputBytes: -heldBytes) })
        await run(again, decided: decided)
    }
}

/// How many outputs records decided on views wrote, by topic.
private struct OutputCounts {
    var deliveries = 0
    var launches = 0
    var deadLetters = 0
    var feedback = 0
    var badges = 0

    mutating func add(_ topic: OutputBuffer.Topic) {
        switch topic {
        case .deliveries: deliveries += 1
        case .launches: launches += 1
        case .deadLetter: deadLetters += 1
        case .feedback: feedback += 1
        case .badges: badges += 1
        }
    }

    /// The counts by topic name, without the topics nothing went to.
    func byName(_ topics: TopicSettings) -> [String: Int] {
        var counts: [String: Int] = [:]
        for (name, count) in [
            (topics.deliveries, deliveries), (topics.launches, launches), (topics.deadLetter, deadLetters), (topics.feedback, feedback),
            (topics.badges, badges),
        ]
        where count > 0 {
            counts[name, default: 0] += count
        }
        return counts
    }
}

extension WorkItem {
    /// Lends the record as a ``RecordView``: a copy where it lies, a message laid out for the call.
    func withView<Result>(_ body: (borrowing RecordView) -> Result) -> Result {
        switch content {
        case .copy(let copy): copy.withView(body)
        case .message(let message): RequestRecord(message).withView(body)
        }
    }

    /// A consumed record taken in as `inFlight` says.
    /// - Parameters:
    ///   - wait: what the rules decided of it before it waits, when it was decided already.
    ///   - replaying: whether it goes the owned way because its output failed on its view.
    convenience init(message: KafkaMessage, inFlight: WorkerCore.InFlight, wait: RequestWait? = nil, replaying: Bool = false) {
        self.init(
            message: message, epoch: inFlight.epoch, generation: inFlight.generation, orderingKey: inFlight.key, bytes: inFlight.bytes,
            wait: wait, replaying: replaying)
    }
}
