import Dispatcher
import Foundation
import Kafka
import Logging
import Notifications
import Records

/// Writes the outputs of decided requests, each request's in order (the delivery, and its launch
/// only once the delivery is acknowledged), and ends every request one way or the other: its
/// outputs written, or, when the brokers refuse them, its dead letter written instead.
///
/// How each failure of a produce is met (docs/worker.md, "Failures"):
/// - retriable (a broker down, a leader election, a time-out): the same record again, with
///   backoff, for at most ``retryLimit`` since its first failure; past it, as a permanent failure;
/// - permanent (too large, invalid, topic unknown or not authorised) on a delivery or launch: the
///   request becomes an `OutputRejected` dead letter, written in its place;
/// - permanent on a dead letter: a record-too-large is cut to its minimal form and tried again;
///   anything else means no record can account for the request: ``onUnwritable`` is told and the
///   request stays unfinished (never committed), like one whose producer failed fatally.
///
/// Exactly-once (``recovery`` set), a failure librdkafka met after sending the record leaves the
/// open transaction unable to commit, so nothing is retried or replaced in it: the request is
/// given up, a refusal for good is remembered (a delivery, action record or launch: its
/// `OutputRejected` dead letter; a dead letter refused for its size: its minimal form), and a
/// rewind is asked for: the worker aborts the transaction and processes its records again, the
/// remembered ones becoming what at-least-once would have written (``TransactionRecovery``). A
/// record librdkafka refused before sending it leaves the transaction as it was, and is met as
/// at-least-once meets it, in the same transaction.
struct OutputPublisher: Sendable {
    /// The producer of every output.
    let producer: KafkaProducer
    /// Builds the `OutputRejected` dead letters.
    let dispatcher: Dispatcher
    /// How long a retriable failure is retried.
    let retryLimit: Duration
    /// For failures, one line per record and failure kind, never a payload or key.
    let logger: Logger
    /// Counts produce failures.
    let metrics: WorkerMetrics?
    /// Told when a dead letter cannot be written at all: the worker must stop.
    let onUnwritable: @Sendable (String) -> Void
    /// Exactly-once only (nil: at-least-once): where a failed produce asks for the transaction's
    /// rewind and a refusal for good is remembered, and where the records processed again find
    /// what they are to be written as.
    var recovery: TransactionRecovery? = nil

    /// One request's outputs on their way.
    private struct Publication {
        /// The consumed request (for its dead letter, should its outputs be refused).
        let message: KafkaMessage
        /// What is being written: the decided result, or the dead letter that replaced it.
        var result: DispatchResult
        /// The index of the output being written.
        var next = 0
        /// When the output being written first failed with a retriable error.
        var failingSince: ContinuousClock.Instant?
        /// Retriable failures of the output being written.
        var attempts = 0
        /// Whether the dead letter was already cut to its minimal form.
        var isMinimal = false

        /// The output being written.
        var output: OutputRecord { result.outputs[next] }

        /// The outputs to write in this round: the next one, or the run of Live Activity
        /// commands it starts.
        var run: ArraySlice<OutputRecord> {
            let outputs = result.outputs
            guard outputs[next].kind == .command else { return outputs[next..<next + 1] }
            let end = outputs[next...].firstIndex { $0.kind != .command } ?? outputs.endIndex
            return outputs[next..<end]
        }
    }

    /// What became of one failed produce.
    private enum Resolution {
        /// Send the same output again after a backoff.
        case retry
        /// A dead letter replaced what was being written: send it.
        case replaced
        /// Give the request up: it stays unfinished (the producer failed or was shut down).
        case abandon
    }

    /// Writes the outputs of `results` (one per message) until each request has every output it
    /// ends with acknowledged.
    ///
    /// - Parameter stillCurrent: asked before each round of outputs after the first, with the
    ///   indices of the requests still writing: whether each still belongs to its partition's
    ///   current assignment. One whose partition left writes nothing more (its result is `nil`):
    ///   the partition's new owner restores its state and processes the request again, and a
    ///   changelog record written after that restore would undo the new owner's later changes.
    /// - Returns: per request, the result that was written (the decided one, or the dead letter
    ///   that replaced it), or `nil` when it was given up: the task was cancelled, the producer
    ///   failed fatally or was shut down, its dead letter could not be written, or its partition
    ///   left.
    /// - Parameter startingAt: per request, how many of its outputs were written already (none
    ///   by default): its publication goes on from the next.
    func publish(
        _ results: [DispatchResult], of messages: [KafkaMessage], startingAt: [Int]? = nil, failedBefore: [KafkaError?]? = nil,
        stillCurrent: ([Int]) -> [Bool] = { $0.map { _ in true } }
    ) async -> [DispatchResult?] {
        var publications = zip(messages, results).map { Publication(message: $0, result: $1) }
        if let startingAt {
            for (index, next) in startingAt.enumerated() { publications[index].next = min(next, publications[index].result.outputs.count) }
        }
        // A record decided in place whose output librdkafka failed goes on as if this publisher
        // had met that failure itself: refused for good, it becomes its dead letter at once (a
        // produce that succeeds on the second try would hide the refusal); retriable, it is
        // retried within the same limit. (Exactly-once met it when it failed: failedInTransaction.)
        var abandoned: Set<Int> = []
        if let failedBefore, recovery == nil {
            let now = ContinuousClock.now
            for (index, failure) in failedBefore.enumerated() {
                guard let failure, publications[index].next < publications[index].result.outputs.count else { continue }
                if case .abandon = resolve(failure, &publications[index], at: now) { abandoned.insert(index) }
            }
        }
        if let recovery {
            // Records whose outputs an aborted transaction saw refused, processed again.
            for index in publications.indices {
                guard let refusal = recovery.refusal(of: publications[index].message.position) else { continue }
                publications[index].result = replacement(of: publications[index].message, decided: publications[index].result, refusal)
                publications[index].next = 0
                publications[index].isMinimal = refusal.isMinimal
            }
        }
        var written = [DispatchResult?](repeating: nil, count: publications.count)
        var active = publications.indices.filter { index in
            guard !abandoned.contains(index) else { return false }
            let done = publications[index].next == publications[index].result.outputs.count
            if done { written[index] = publications[index].result }
            return !done
        }
        var isFirstRound = true
        while !active.isEmpty, !Task.isCancelled {
            if !isFirstRound {
                let current = stillCurrent(active)
                let left = zip(active, current).filter { !$0.1 }.map(\.0)
                if !left.isEmpty {
                    logger.info(
                        "outputs of a record whose partition left this worker are not written; its new owner processes it again",
                        metadata: [
                            LogKey.partitions: "\(describe(Set(left.map { TopicPartition(topic: messages[$0].topic, partition: messages[$0].partition) })))",
                            "records": "\(left.count)",
                        ])
                    active = zip(active, current).compactMap { $1 ? $0 : nil }
                    guard !active.isEmpty else { break }
                }
            }
            isFirstRound = false
            // Each request's next output, or its next run of Live Activity commands: those depend
            // on nothing before them, and a broadcast's fan-out must not take a round trip each.
            var records: [ProducerRecord] = []
            records.reserveCapacity(active.count)
            let runs = active.map { index in
                let run = publications[index].run
                for output in run { records.append(Self.producerRecord(output)) }
                return run.count
            }
            let reports = await producer.send(records)
            let now = ContinuousClock.now
            var waiting: [Int] = []
            var backoff: Duration?
            var first = 0
            for (index, run) in zip(active, runs) {
                let mine = reports[first..<first + run]
                first += run
                let acknowledged = mine.prefix { if case .success = $0 { true } else { false } }.count
                publications[index].next += acknowledged
                if acknowledged > 0 {
                    publications[index].failingSince = nil
                    publications[index].attempts = 0
                }
                guard acknowledged < run, case .failure(let error) = mine[mine.startIndex + acknowledged] else {
                    if publications[index].next == publications[index].result.outputs.count {
                        written[index] = publications[index].result
                    } else {
                        waiting.append(index)
                    }
                    continue
                }
                // The outputs of the run after the refused one go again with it (a command
                // written twice finds its activity changed already: at-least-once).
                metrics?.produceFailed(topic: publications[index].output.topic, error: error)
                switch resolve(error, &publications[index], at: now) {
                case .retry:
                    waiting.append(index)
                    let delay = Self.backoff(attempt: publications[index].attempts)
                    backoff = max(backoff ?? .zero, delay)
                case .replaced:
                    waiting.append(index)
                case .abandon:
                    break
                }
            }
            active = waiting
            if let backoff { try? await Task.sleep(for: backoff) }
        }
        return written
    }

    /// What a record processed again is written as, its outputs having been refused in an
    /// aborted transaction (``TransactionRecovery/Refusal``): its `OutputRejected` dead letter
    /// (after its delivery when its launch was refused), or `decided` (its own dead letter), cut
    /// to the minimal form when that was refused too.
    func replacement(of message: KafkaMessage, decided: DispatchResult, _ refusal: TransactionRecovery.Refusal) -> DispatchResult {
        var result = decided
        if let rejection = refusal.rejection {
            result = dispatcher.outputRejected(RequestRecord(message), detail: rejection, tooLarge: refusal.isTooLarge)
            if refusal.isLaunch, let launch = decided.outputs.firstIndex(where: { $0.kind == .launch }) {
                result = DispatchResult(result.decision, outputs: Array(decided.outputs[..<launch]) + result.outputs)
            }
        }
        if refusal.isMinimal, let minimal = minimalForm(of: result) { result = minimal }
        return result
    }

    /// `result` with its dead letter cut to the minimal form, in its place (the feedback record of
    /// section 12.2, if any, still follows it); nil when it has no dead letter.
    private func minimalForm(of result: DispatchResult) -> DispatchResult? {
        guard let deadLetter = result.deadLetter, let output = result.outputs.first(where: { $0.kind == .deadLetter }) else { return nil }
        let minimal = deadLetter.outputRecord(topic: output.topic, limit: dispatcher.outputLimit, extent: .minimal)
        return DispatchResult(result.decision, outputs: result.outputs.map { $0.kind == .deadLetter ? minimal : $0 })
    }

    /// Decides what a failed produce of the publication's current output calls for.
    private func resolve(_ error: KafkaError, _ publication: inout Publication, at now: ContinuousClock.Instant) -> Resolution {
        if let recovery { return resolveInTransaction(error, &publication, recovery) }
        switch error.produceFailure {
        case .fatal, .shutDown:
            return .abandon
        case .retriable:
            let since = publication.failingSince ?? now
            publication.failingSince = since
            publication.attempts += 1
            if now - since < retryLimit {
                if publication.attempts == 1 || publication.attempts.isMultiple(of: 20) {
                    logger.warning("cannot produce an output; retrying", metadata: metadata(publication, error))
                }
                return .retry
            }
            return reject(&publication, error, after: now - since)
        case .permanent:
            return reject(&publication, error, after: nil)
        }
    }

    /// Exactly-once: what a failed produce of the publication's current output calls for. A
    /// record librdkafka refused before sending it leaves the transaction as it was: met as
    /// at-least-once meets it. Any other failure leaves the transaction unable to commit: the
    /// request is given up (``failedInTransaction(_:kind:topic:of:metadata:)``).
    private func resolveInTransaction(
        _ error: KafkaError, _ publication: inout Publication, _ recovery: TransactionRecovery
    ) -> Resolution {
        if error.produceFailure == .permanent, error.isRefusedLocally { return reject(&publication, error, after: nil) }
        let output = publication.output
        failedInTransaction(error, kind: output.kind, topic: output.topic, of: publication.message.position, metadata: metadata(publication, error))
        return .abandon
    }

    /// Exactly-once: an output that librdkafka sent failed (or one of the open transaction's
    /// failed before it), so the transaction cannot commit: a refusal for good is remembered for
    /// its record at `place` (a delivery, action record or launch: its `OutputRejected` dead
    /// letter; a dead letter refused for its size: its minimal form), and a rewind is asked for.
    /// A dead letter refused otherwise (or already minimal), a feedback or changelog record, a
    /// Live Activity command: nothing can account for the request, ``onUnwritable`` is told.
    /// Records decided in place meet their failures here too (their outputs are not published
    /// here).
    func failedInTransaction(
        _ error: KafkaError, kind: OutputRecord.Kind, topic: String, of place: TopicPartitionOffset, metadata: Logger.Metadata
    ) {
        guard let recovery else { return }
        switch error.produceFailure {
        case .shutDown, .fatal:
            // A fatal error stops the worker through the producer's error callback.
            return
        case .permanent:
            switch kind {
            case .delivery, .action, .launch:
                logger.error(
                    "an output was refused; its request becomes a dead letter (exactly-once: in the transaction after this one's abort)",
                    metadata: metadata)
                recovery.rememberRejection(
                    of: place, detail: "The \(kind.description) record could not be written to \(topic): \(error)",
                    isTooLarge: error.isRecordTooLarge, isLaunch: kind == .launch)
            case .deadLetter where error.isRecordTooLarge && recovery.rememberMinimalDeadLetter(of: place):
                logger.warning(
                    "a dead letter was refused for its size; writing it cut to its minimal form (exactly-once: in the transaction after this one's abort)",
                    metadata: metadata)
            case .deadLetter, .feedback, .activity, .stored, .badge, .command:
                unwritable(kind: kind, topic: topic, error, retried: "", metadata: metadata)
                return
            }
        case .retriable:
            // Logged once per transaction: the others fail with it (purged, or refused while it
            // cannot take records).
            if recovery.requestRewind() {
                logger.warning("an output could not be written in the transaction; it is aborted and its records processed again", metadata: metadata)
            }
            return
        }
        recovery.requestRewind()
    }

    /// Replaces a refused output by the request's dead letter (or a refused dead letter by its
    /// minimal form); tells ``onUnwritable`` when even that cannot be.
    private func reject(_ publication: inout Publication, _ error: KafkaError, after retrying: Duration?) -> Resolution {
        let output = publication.output
        let retried = retrying.map { " after retrying for \(DurationText.spell($0))" } ?? ""
        publication.failingSince = nil
        publication.attempts = 0
        switch output.kind {
        case .delivery, .action, .launch:
            logger.error("an output was refused; its request becomes a dead letter", metadata: metadata(publication, error))
            let detail = "The \(output.kind.description) record could not be written to \(output.topic)\(retried): \(error)"
            publication.result = dispatcher.outputRejected(
                RequestRecord(publication.message), detail: detail, tooLarge: error.isRecordTooLarge)
            publication.next = 0
            return .replaced
        case .deadLetter:
            if error.isRecordTooLarge, !publication.isMinimal, let minimal = minimalForm(of: publication.result) {
                logger.warning("a dead letter was refused for its size; writing it cut to its minimal form", metadata: metadata(publication, error))
                publication.result = minimal
                publication.isMinimal = true
                return .replaced
            }
            unwritable(publication, error, retried: retried)
            return .abandon
        case .feedback, .activity, .stored, .badge, .command:
            unwritable(publication, error, retried: retried)
            return .abandon
        }
    }

    /// A dead letter (or a record fitted to the limit when made, to a topic checked at start: a
    /// feedback or changelog record, a Live Activity command) refused for good: nothing that says
    /// more can replace it, so no record can account for the request: ``onUnwritable`` is told.
    private func unwritable(_ publication: Publication, _ error: KafkaError, retried: String) {
        let output = publication.output
        unwritable(kind: output.kind, topic: output.topic, error, retried: retried, metadata: metadata(publication, error))
    }

    private func unwritable(kind: OutputRecord.Kind, topic: String, _ error: KafkaError, retried: String, metadata: Logger.Metadata) {
        let what = kind == .deadLetter ? "a dead letter" : "an output record (\(kind.description))"
        let reason = "\(what) cannot be written to \(topic)\(retried): \(error)"
        logger.critical("\(reason); stopping the worker", metadata: metadata)
        onUnwritable(reason)
    }

    /// The log metadata of a failure: where the request came from and what failed.
    private func metadata(_ publication: Publication, _ error: KafkaError) -> Logger.Metadata {
        [
            LogKey.topic: "\(publication.output.topic)",
            LogKey.partition: "\(publication.message.partition)",
            LogKey.offset: "\(publication.message.offset)",
            LogKey.attempt: "\(publication.attempts)",
            LogKey.error: "\(error)",
        ]
    }

    /// The wait before the `attempt`th retry: 100 ms doubling up to 5 s.
    static func backoff(attempt: Int) -> Duration {
        .milliseconds(min(100 << min(max(attempt, 1) - 1, 6), 5_000))
    }

    /// An output as the producer takes it.
    private static func producerRecord(_ output: OutputRecord) -> ProducerRecord {
        ProducerRecord(
            topic: output.topic, partition: output.partition, key: output.key, value: output.value,
            headers: output.headers)
    }
}

extension RequestRecord {
    /// The request record of a consumed message.
    init(_ message: KafkaMessage) {
        self.init(
            key: message.key,
            headers: message.headers,
            value: message.value,
            source: message.position,
            timestamp: message.timestamp
        )
    }
}
