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
        /// What the core needs to finish it.
        var finished: WorkerCore.Finished
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
        let admissions = admissions(of: batch)
        var effects = WorkerEffects()
        var admitted: [WorkerCore.Admitted]?
        while true {
            // Exactly-once: no record is taken in while a transaction commits (its drain would
            // otherwise wait for them too).
            let generation = progress.generation
            let now = ContinuousClock.now
            admitted = core.withLock { core -> [WorkerCore.Admitted]? in
                guard core.admitsRecords else { return nil }
                return core.admit(admissions, at: now, into: &effects) { index, epoch, generation in
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
        var work = LentWork(batch: batch, outputs: nil, records: [], outputBytes: 0, receivedAt: receivedAt, owned: [])
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
            guard batch.topicIndex(at: index) == requests, !refusals || !recovery.isRefused(admission.partition, offset: admission.offset) else {
                work.owned.append(owned())
                continue
            }
            let finished = WorkerCore.Finished(
                partition: admission.partition, epoch: epoch, generation: generation, offset: admission.offset, key: admission.key,
                bytes: admission.bytes)
            let decision = batch.withRecordView(at: index) { view in
                dispatcher.decideInPlace(view, tables: tables, now: receivedAt, into: &output)
            }
            guard case .decided(let decided) = decision else {
                work.owned.append(owned())
                continue
            }
            let lent = outputs ?? producer.openLentOutputs(capacity: admitted.count)
            outputs = lent
            switch await produce(output, of: index, in: batch, with: lent, topics: topics) {
            case .enqueued(let slot, let timestamp):
                work.records.append(
                    InPlaceRecord(index: index, finished: finished, decided: decided, slot: slot, topic: output.topic, timestamp: timestamp))
                work.outputBytes += decided.outputBytes
            case .refused:
                // The owned way meets the refusal as it meets every produce failure.
                work.owned.append(owned())
            }
        }
        outputs?.close()
        work.outputs = outputs
        if work.outputBytes > 0 { carryOut(core.withLock { $0.holding(outputBytes: work.outputBytes) }) }
        return work
    }

    /// What became of an output handed to the producer.
    private enum Enqueued {
        /// librdkafka took it, in `slot`; the record's timestamp.
        case enqueued(slot: Int, timestamp: Int64?)
        /// The producer refused it at once (counted in the metrics).
        case refused
    }

    /// Hands record `index`'s output to the producer, waiting for room in its queue when full.
    private func produce(
        _ output: InPlaceOutput, of index: Int, in batch: ConsumedBatch, with outputs: LentOutputs, topics: InPlaceTopics
    ) async -> Enqueued {
        while true {
            let attempt = batch.withRecordView(at: index) { view in
                (produce(output, of: view, with: outputs, topics: topics), view.timestampMilliseconds)
            }
            switch attempt.0 {
            case .enqueued(let slot): return .enqueued(slot: slot, timestamp: attempt.1)
            case .queueFull: await outputs.waitForQueueSpace()
            case .refused(let error):
                metrics?.produceFailed(topic: topics[output.topic].name, error: error)
                return .refused
            }
        }
    }

    /// Hands `output` (lent from `record`) to the producer.
    private func produce(
        _ output: InPlaceOutput, of record: borrowing RecordView, with outputs: LentOutputs, topics: InPlaceTopics
    ) -> LentProduce {
        let topic = topics[output.topic]
        return output.withLent(from: record) { key, value, headers in
            outputs.produce { producer in producer.produce(to: topic, partition: nil, key: key, value: value, headers: headers) }
        }
    }

    /// Each record's admission: its partition, offset, ordering key (made from its key where it
    /// lies) and bytes. A batch holds runs of one partition: each run's key hasher is made once.
    private func admissions(of batch: ConsumedBatch) -> [WorkerCore.Admission] {
        var admissions: [WorkerCore.Admission] = []
        admissions.reserveCapacity(batch.count)
        var run: (topic: Int, number: Int32, partition: TopicPartition, hasher: Hasher?)?
        for index in 0..<batch.count {
            let topic = batch.topicIndex(at: index)
            let number = batch.partition(at: index)
            if run?.topic != topic || run?.number != number {
                let partition = TopicPartition(topic: batch.topicNames[topic], partition: number)
                run = (topic, number, partition, orderingPolicy.keyHasher(of: partition))
            }
            let sizes = batch.sizes(at: index)
            let key = batch.withUnsafeKeyBytes(at: index) { orderingPolicy.key(of: run!.partition, hasher: run!.hasher, token: $0) }
            admissions.append(
                WorkerCore.Admission(
                    partition: run!.partition, offset: batch.offset(at: index), key: key,
                    bytes: WorkItem.bytes(key: sizes.key, value: sizes.value, headerBytes: sizes.headerBytes, headers: sizes.headers)))
        }
        return admissions
    }

    /// Awaits the acknowledgements of a lent batch's first outputs, writes the launches that
    /// follow acknowledged deliveries (and awaits them), and finishes the records; a record
    /// whose output failed goes the owned way from where it failed, where it is retried or
    /// becomes a dead letter (``OutputPublisher``). The batch goes back to librdkafka when this
    /// ends.
    func completeInPlace(_ work: LentWork) async {
        guard let lent = work.outputs, !work.records.isEmpty else { return }
        await lent.waitForAll()
        var done: [InPlaceRecord] = []
        done.reserveCapacity(work.records.count)
        var launching: [InPlaceRecord] = []
        var replays: [(record: InPlaceRecord, written: Int)] = []
        for record in work.records {
            switch lent.outcome(ofSlot: record.slot) {
            case .success where record.decided.launch != nil: launching.append(record)
            case .success: done.append(record)
            case .failure(let error):
                metrics?.produceFailed(topic: inPlaceTopics?[record.topic].name ?? "", error: error)
                failedInPlace(error, of: record, output: record.topic)
                replays.append((record, 0))
            }
        }
        var launched = 0
        if !launching.isEmpty, !Task.isCancelled {
            let (written, failed) = await launch(launching, of: work.batch)
            done += written
            launched = written.count
            replays += failed.map { ($0, 1) }
        }
        var outputs: [String: Int] = [:]
        let topicNames = dispatcher.configuration.topics
        for record in done {
            let name = switch record.topic {
            case .deliveries: topicNames.deliveries
            case .launches: topicNames.launches
            case .deadLetter: topicNames.deadLetter
            }
            outputs[name, default: 0] += 1
        }
        if launched > 0 { outputs[topicNames.launches, default: 0] += launched }
        let replayed = replays.reduce(0) { $0 + $1.record.decided.outputBytes }
        let finished = core.withLock { core in
            core.finishInPlace(
                done.map(\.finished), labels: done.map(\.decided.labels), outputs: outputs, finishedTopic: settings.requestsTopic,
                outputBytes: work.outputBytes - replayed)
        }
        metrics?.observe(timestamps: done.compactMap(\.timestamp))
        // Finishing records is progress too (as `publish` says).
        health?.loopRan()
        carryOut(finished)
        if !replays.isEmpty {
            await replay(replays, of: work.batch, receivedAt: work.receivedAt, heldBytes: replayed)
        }
        if !finished.start.isEmpty { await run(finished.start) }
    }

    /// Writes the launches of `records` (their deliveries acknowledged) and awaits them.
    /// - Returns: the records whose launch was acknowledged, and those whose launch failed.
    private func launch(_ records: [InPlaceRecord], of batch: ConsumedBatch) async -> (written: [InPlaceRecord], failed: [InPlaceRecord]) {
        guard let topics = inPlaceTopics else { return ([], records) }
        let outputs = producer.openLentOutputs(capacity: records.count)
        var output = InPlaceOutput()
        var slots: [Int?] = []
        slots.reserveCapacity(records.count)
        for record in records {
            guard let launch = record.decided.launch else { continue }
            var slot: Int?
            while true {
                let attempt = batch.withRecordView(at: record.index) { view in
                    dispatcher.writeLaunchInPlace(view, launch, into: &output)
                    return produce(output, of: view, with: outputs, topics: topics)
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
        var written: [InPlaceRecord] = []
        var failed: [InPlaceRecord] = []
        for (record, slot) in zip(records, slots) {
            if let slot, case .success = outputs.outcome(ofSlot: slot) {
                written.append(record)
            } else {
                if let slot, case .failure(let error) = outputs.outcome(ofSlot: slot) { failedInPlace(error, of: record, output: .launches) }
                failed.append(record)
            }
        }
        return (written, failed)
    }

    /// Records decided in place whose output failed, decided again the owned way (the same
    /// decision: they wait for nothing and change no state) and published from the output that
    /// failed: the owned path retries it, or writes the dead letter in its place.
    private func replay(_ replays: [(record: InPlaceRecord, written: Int)], of batch: ConsumedBatch, receivedAt: Date, heldBytes: Int) async {
        var decided: [Decided] = []
        var again: [WorkItem] = []
        for (record, written) in replays {
            let finished = record.finished
            let item = WorkItem(
                message: batch.message(at: record.index), epoch: finished.epoch, generation: finished.generation,
                orderingKey: finished.key, bytes: finished.bytes)
            // Decided without waiting, as in place (unless the tables changed meanwhile: a device
            // gone offline, say; then it goes the owned way from the start, at least once).
            guard case .decided(let result) = dispatcher.prepare(RequestRecord(item.message), tables: tables, now: receivedAt) else {
                again.append(item)
                continue
            }
            decided.append(Decided(item: item, result: result, written: written))
        }
        // Their outputs' bytes are held as the owned path holds them (``publish(_:)``).
        carryOut(core.withLock { $0.holding(outputBytes: -heldBytes) })
        await run(again, decided: decided)
    }
}
