import Dispatcher
import Foundation
import Kafka
import Logging
import Notifications
import Records
import Synchronization

/// The producer's handles on the topics records decided in place write to, made once.
struct InPlaceTopics: Sendable {
    let deliveries: ProducerTopic
    let launches: ProducerTopic
    let deadLetter: ProducerTopic

    /// The handles, nil when the producer no longer takes records.
    init?(producer: KafkaProducer, topics: TopicSettings) {
        guard let deliveries = producer.topic(named: topics.deliveries), let launches = producer.topic(named: topics.launches),
            let deadLetter = producer.topic(named: topics.deadLetter)
        else { return nil }
        self.deliveries = deliveries
        self.launches = launches
        self.deadLetter = deadLetter
    }

    /// The handle of an in-place output's topic.
    subscript(topic: InPlaceOutput.Topic) -> ProducerTopic {
        switch topic {
        case .deliveries: deliveries
        case .launches: launches
        case .deadLetter: deadLetter
        }
    }
}

extension DispatchWorker {
    /// A record of a lent batch decided in place, between its first output's enqueueing and its
    /// end.
    struct InPlaceRecord: Sendable {
        /// Its index in the batch.
        var index: Int
        /// Its partition's index in the batch's partition table.
        var partition: Int
        /// What the core needs to finish it.
        var inFlight: WorkerCore.InFlight
        /// What it was decided to be.
        var decided: Dispatcher.InPlaceDecided
        /// Its first output's slot in the batch's outputs.
        var slot: Int
        /// The topic of its first output.
        var topic: InPlaceOutput.Topic
        /// Its timestamp (milliseconds since 1970), for the latency metric.
        var timestamp: Int64?
    }

    /// What taking a lent batch left to do once its records were decided: the outputs of those
    /// decided in place to await and finish, and the records that go the owned way.
    struct LentWork: Sendable {
        var batch: ConsumedBatch
        /// The partitions of the batch's records.
        var partitions: WorkerCore.PartitionTable
        /// The first outputs of the records decided in place; nil when there are none.
        var outputs: LentOutputs?
        var records: [InPlaceRecord]
        var outputBytes: Int
        var receivedAt: Date
        /// Records that go the owned way: copied out of the batch, started, in order.
        var owned: [WorkItem]
    }

    /// Takes a lent batch in (``WorkerCore/admit(_:at:into:queue:)``), decides each request that
    /// may start where it lies (``Dispatcher/decideInPlace(_:tables:now:into:)``) and hands its
    /// first output to the producer; copies out the records that go the owned way. Nothing
    /// suspends between taking a record in and producing its output, except for room in the
    /// producer's queue.
    ///
    /// - Parameter output: the buffers every record decided in place is written into.
    /// - Returns: what is left to do, in tasks of its own (``completeInPlace(_:)`` and ``run(_:decided:)``).
    func take(_ batch: ConsumedBatch, output: inout InPlaceOutput) async -> LentWork? {
        let (partitions, admissions) = admissions(of: batch)
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
                    // A record that waits behind its key: copied out (under the lock, rarely)
                    // so that the batch goes back to librdkafka once its own records are done.
                    WorkItem(
                        message: batch.message(at: index), epoch: epoch, generation: generation, orderingKey: admissions[index].key,
                        bytes: admissions[index].bytes)
                }
            }
            if admitted != nil { break }
            await progress.wait(after: generation)
        }
        carryOut(effects)
        guard let admitted, let topics = inPlaceTopics else { return nil }
        let receivedAt = Date()
        let requests = batch.topicNames.firstIndex(of: settings.requestsTopic)
        // Opened for the first record decided in place (a batch of responses or of state
        // records has none).
        var outputs: LentOutputs?
        var work = LentWork(
            batch: batch, partitions: partitions, outputs: nil, records: [], outputBytes: 0, receivedAt: receivedAt, owned: [])
        // Room for every record at once: grown by appending, the array copied its records (a
        // few hundred bytes each) again at every doubling.
        work.records.reserveCapacity(admitted.count)
        // Exactly-once: records refused in an aborted transaction become their dead letters the owned way.
        let refusals = recovery.hasRefusals
        for (index, outcome) in admitted.enumerated() {
            guard case .started(let epoch, let generation) = outcome else { continue }
            let admission = admissions[index]
            func owned() -> WorkItem {
                WorkItem(
                    message: batch.message(at: index), epoch: epoch, generation: generation, orderingKey: admission.key,
                    bytes: admission.bytes)
            }
            guard batch.topicIndex(at: index) == requests, !refusals || !recovery.isRefused(partitions.partitions[admission.partition], offset: admission.offset) else {
                work.owned.append(owned())
                continue
            }
            let inFlight = WorkerCore.InFlight(
                epoch: epoch, generation: generation, offset: admission.offset, key: admission.key, bytes: admission.bytes)
            // Decided and produced on one view of the record, unless the producer's queue is
            // full: then produced again, once there is room.
            let step = batch.withRecordView(at: index) { view -> InPlaceStep in
                guard case .decided(let decided) = dispatcher.decideInPlace(view, tables: tables, now: receivedAt, into: &output) else {
                    return .owned
                }
                let lent = outputs ?? producer.openLentOutputs(capacity: admitted.count)
                outputs = lent
                return .decided(decided, produce(&output, of: view, with: lent, topics: topics), timestamp: view.timestampMilliseconds)
            }
            guard case .decided(let decided, var attempt, let timestamp) = step, let lent = outputs else {
                work.owned.append(owned())
                continue
            }
            while case .queueFull = attempt {
                await lent.waitForQueueSpace()
                attempt = batch.withRecordView(at: index) { view in produce(&output, of: view, with: lent, topics: topics) }
            }
            switch attempt {
            case .enqueued(let slot):
                work.records.append(
                    InPlaceRecord(
                        index: index, partition: admission.partition, inFlight: inFlight, decided: decided, slot: slot,
                        topic: output.topic, timestamp: timestamp))
                work.outputBytes += decided.outputBytes
            case .refused(let error):
                // The owned way meets the refusal as it meets every produce failure.
                metrics?.produceFailed(topic: topics[output.topic].name, error: error)
                work.owned.append(owned())
            case .queueFull:
                preconditionFailure("produced until the queue took it")
            }
        }
        outputs?.close()
        work.outputs = outputs
        if work.outputBytes > 0 { carryOut(core.withLock { $0.holding(outputBytes: work.outputBytes) }) }
        return work
    }

    /// What became of a request decided in place, on its view.
    private enum InPlaceStep {
        /// Decided: its first output written, and handed to the producer.
        case decided(Dispatcher.InPlaceDecided, LentProduce, timestamp: Int64?)
        /// It goes the owned way.
        case owned
    }

    /// Hands `output` (lent from `record`) to the producer.
    private func produce(
        _ output: inout InPlaceOutput, of record: borrowing RecordView, with outputs: LentOutputs, topics: InPlaceTopics
    ) -> LentProduce {
        let topic = topics[output.topic]
        return output.withLent(from: record) { key, value, headers in
            outputs.produce(to: topic, partition: nil, key: key, value: value, headers: headers)
        }
    }

    /// Each record's admission: its partition (in the batch's partition table), offset, ordering
    /// key (made from its key where it lies) and bytes. A batch holds runs of one partition: each
    /// run's key hasher is made once.
    private func admissions(of batch: ConsumedBatch) -> (WorkerCore.PartitionTable, [WorkerCore.Admission]) {
        var table = WorkerCore.PartitionTable()
        var admissions: [WorkerCore.Admission] = []
        admissions.reserveCapacity(batch.count)
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
                    bytes: WorkItem.bytes(key: sizes.key, value: sizes.value, headerBytes: sizes.headerBytes, headers: sizes.headers)))
        }
        return (table, admissions)
    }

    /// Awaits the acknowledgements of a lent batch's first outputs, writes the launches that
    /// follow acknowledged deliveries (and awaits them), and finishes the records; a record
    /// whose output failed goes the owned way from where it failed, where it is retried or
    /// becomes a dead letter (``OutputPublisher``). The batch goes back to librdkafka when this
    /// ends.
    func completeInPlace(_ work: LentWork) async {
        guard let lent = work.outputs, !work.records.isEmpty else { return }
        await lent.waitForAll()
        // The records done, by their index in `work.records`: a record is a few hundred bytes,
        // and sorting copies of them into lists cost more than the rest of this function.
        var done: [Int] = []
        done.reserveCapacity(work.records.count)
        var launching: [Int] = []
        var replays: [(record: InPlaceRecord, written: Int, failure: KafkaError?)] = []
        for (position, record) in work.records.enumerated() {
            switch lent.outcome(ofSlot: record.slot) {
            case .success where record.decided.launch != nil: launching.append(position)
            case .success: done.append(position)
            case .failure(let error):
                metrics?.produceFailed(topic: inPlaceTopics?[record.topic].name ?? "", error: error)
                failedInPlace(error, of: record, in: work.partitions, output: record.topic)
                replays.append((record, 0, error))
            }
        }
        var launched = 0
        if !launching.isEmpty, !Task.isCancelled {
            let (written, failed) = await launch(launching, of: work)
            done += written
            launched = written.count
            replays += failed.map { (work.records[$0], 1, nil) }
        }
        // Counted by topic here, named once: a name per record was a string's copy each.
        var deliveries = 0
        var deadLetters = 0
        for position in done {
            if case .deadLetter = work.records[position].topic { deadLetters += 1 } else { deliveries += 1 }
        }
        let topicNames = dispatcher.configuration.topics
        var outputs: [String: Int] = [:]
        if deliveries > 0 { outputs[topicNames.deliveries] = deliveries }
        if deadLetters > 0 { outputs[topicNames.deadLetter] = deadLetters }
        if launched > 0 { outputs[topicNames.launches, default: 0] += launched }
        let replayed = replays.reduce(0) { $0 + $1.record.decided.outputBytes }
        // Built with the labels of the core's parameter: an array of unlabelled tuples passed
        // there was cast element by element at run time.
        let records: [(partition: Int, record: WorkerCore.InFlight, labels: DispatchResult.Labels)] = done.map {
            let record = work.records[$0]
            return (partition: record.partition, record: record.inFlight, labels: record.decided.labels)
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
            await replay(replays, of: work.batch, receivedAt: work.receivedAt, heldBytes: replayed)
        }
        if !finished.start.isEmpty { await run(finished.start) }
    }

    /// Writes the launches of the records of `work` at `positions` (their deliveries
    /// acknowledged) and awaits them.
    /// - Returns: the positions of the records whose launch was acknowledged, and of those whose
    ///   launch failed.
    private func launch(_ positions: [Int], of work: LentWork) async -> (written: [Int], failed: [Int]) {
        guard let topics = inPlaceTopics else { return ([], positions) }
        let batch = work.batch
        let outputs = producer.openLentOutputs(capacity: positions.count)
        var output = InPlaceOutput()
        var slots: [Int?] = []
        slots.reserveCapacity(positions.count)
        for position in positions {
            let record = work.records[position]
            guard let launch = record.decided.launch else { continue }
            var slot: Int?
            while true {
                let attempt = batch.withRecordView(at: record.index) { view in
                    dispatcher.writeLaunchInPlace(view, launch, into: &output)
                    return produce(&output, of: view, with: outputs, topics: topics)
                }
                if case .queueFull = attempt {
                    await outputs.waitForQueueSpace()
                    continue
                }
                if case .enqueued(let enqueued) = attempt { slot = enqueued }
                break
            }
            slots.append(slot)
        }
        outputs.close()
        await outputs.waitForAll()
        var written: [Int] = []
        var failed: [Int] = []
        for (position, slot) in zip(positions, slots) {
            if let slot, case .success = outputs.outcome(ofSlot: slot) {
                written.append(position)
            } else {
                if let slot, case .failure(let error) = outputs.outcome(ofSlot: slot) {
                    failedInPlace(error, of: work.records[position], in: work.partitions, output: .launches)
                }
                failed.append(position)
            }
        }
        return (written, failed)
    }

    /// Records decided in place whose output failed, decided again the owned way (the same
    /// decision: they wait for nothing and change no state) and published from the output that
    /// failed: the owned path retries it, or writes the dead letter in its place.
    private func replay(_ replays: [(record: InPlaceRecord, written: Int, failure: KafkaError?)], of batch: ConsumedBatch, receivedAt: Date, heldBytes: Int) async {
        var decided: [Decided] = []
        var again: [WorkItem] = []
        for (record, written, failure) in replays {
            let inFlight = record.inFlight
            let item = WorkItem(
                message: batch.message(at: record.index), epoch: inFlight.epoch, generation: inFlight.generation,
                orderingKey: inFlight.key, bytes: inFlight.bytes)
            // Decided without waiting, as in place (unless the tables changed meanwhile: a device
            // gone offline, say; then it goes the owned way from the start, at least once).
            guard case .decided(let result) = dispatcher.prepare(RequestRecord(item.message), tables: tables, now: receivedAt) else {
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
