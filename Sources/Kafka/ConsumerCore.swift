import BlockingWork
import Logging
import Records
import Synchronization

/// A consumer handle's shared state and its poll thread; shared by the public type and that thread.
///
/// Messages, rebalances, statistics, errors and commit results all arrive through the one consumer
/// queue, which the poll thread polls until close. It stops polling only while ``intake`` says so:
/// while the owner holds the intake, and while the reader has not taken the last batch yet.
final class ConsumerCore: Sendable {
    /// What the poll thread reads.
    enum Mode: Sendable {
        /// A group member (`subscribe`).
        case group
        /// Every partition of one topic from the beginning, outside any group (`assign`).
        case reader(topic: String)
    }

    /// Where the consumer is in its life.
    enum Phase {
        /// Polling.
        case running
        /// Asked to close: the poll thread closes the consumer and destroys the handle.
        case closing
        /// The handle is gone.
        case closed
    }

    /// Everything the poll thread and callers share.
    struct State {
        /// The handle; nil once closed (the poll thread then drops the last reference and destroys it).
        var client: RDKafkaClient?
        /// Where the consumer is in its life.
        var phase: Phase = .running
        /// Revoked partitions the owner has released, to unassign on the poll thread.
        var releases: [[TopicPartition]] = []
        /// Rewinds asked for, to carry out on the poll thread (``rewind(_:timeout:)``).
        var rewinds: [Rewind] = []
        /// `close` callers, resumed once the handle is destroyed.
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The shared state.
    let state: Mutex<State>
    /// The callbacks' context (owned, retained and released by the handle's owner).
    let context: ConsumerContext
    /// The writing end of the event buffer.
    private let events: AsyncStream<ConsumerEvent>.Continuation
    /// The reading end, handed to the public event sequence.
    let stream: AsyncStream<ConsumerEvent>
    /// What to read.
    let mode: Mode
    /// Paces the intake of messages: the owner's hold, and one unread batch at most.
    let intake = IntakeGate()
    /// Most messages handed over in one ``ConsumerEvent/messages(_:)`` batch.
    let maxBatchSize: Int
    /// Whether messages are lent (``ConsumerEvent/lent(_:)``) rather than copied.
    let lendsMessages: Bool
    /// The batches lent and not yet released: close waits for them.
    let loans = ConsumerLoans()
    /// How long close waits for lent batches to come back before it closes the consumer anyway.
    static let loanReturnLimit: Double = 60
    /// For the poll thread's own reports.
    let logger: Logger
    /// How long the intake may be held before the poll thread pauses the assignment and polls on
    /// (``LongHold``): half of `max.poll.interval.ms`, at most 30 s. A group member only: a topic
    /// reader has no group to leave.
    let longHoldAfter: Duration?

    /// Creates the consumer handle (not yet polled).
    init(
        configuration: ConsumerConfiguration, mode: Mode, logger: Logger, beforeAssign: KafkaConsumer.BeforeAssign? = nil,
        onLost: KafkaConsumer.OnLost? = nil, committedFloor: CommittedFloor? = nil
    ) throws(KafkaError) {
        let config = RDKafkaConfig()
        for (name, value) in configuration.librdkafkaProperties {
            try config.set(name, value)
        }
        if case .reader = mode {
            try config.set("enable.partition.eof", "true")
        }
        config.routeConsumerCallbacks()
        let context = ConsumerContext(logger: logger, beforeAssign: beforeAssign, onLost: onLost, committedFloor: committedFloor)
        let client = try RDKafkaClient(.consumer, config: config, context: context)
        self.context = context
        self.state = Mutex(State(client: client))
        (stream, events) = AsyncStream.makeStream(of: ConsumerEvent.self, bufferingPolicy: .unbounded)
        self.mode = mode
        self.maxBatchSize = max(1, configuration.maxBatchSize)
        self.lendsMessages = configuration.lendsMessages
        self.logger = logger
        if case .group = mode {
            longHoldAfter = min(configuration.maxPollInterval / 2, .seconds(30))
        } else {
            longHoldAfter = nil
        }
    }

    /// Starts the poll thread.
    func start() {
        BlockingWork.startThread(named: "kafka-consumer-poll") { [self] in runPollThread() }
    }

    /// The handle while running, or nil once closing.
    var client: RDKafkaClient? {
        state.withLock { state in
            guard case .running = state.phase else { return nil }
            return state.client
        }
    }

    /// Queues revoked partitions for unassignment on the poll thread and wakes it.
    func release(_ partitions: [TopicPartition]) {
        guard !partitions.isEmpty else { return }
        let client: RDKafkaClient? = state.withLock { state in
            guard case .running = state.phase else { return nil }
            state.releases.append(partitions)
            return state.client
        }
        client?.yield()
        intake.wake()
    }

    /// A rewind asked for: where to move the partitions, and who waits for it.
    struct Rewind {
        var offsets: [TopicPartitionOffset]
        var milliseconds: Int32
        var waiter: CheckedContinuation<KafkaError?, Never>
    }

    /// Moves partitions to `offsets` on the poll thread (``KafkaConsumer/rewind(_:timeout:)``).
    /// - Returns: the failure, or nil once the partitions were moved and ``ConsumerEvent/rewound(_:)``
    ///   was reported.
    func rewind(_ offsets: [TopicPartitionOffset], milliseconds: Int32) async -> KafkaError? {
        guard !offsets.isEmpty else { return nil }
        return await withCheckedContinuation { continuation in
            let client: RDKafkaClient? = state.withLock { state in
                guard case .running = state.phase, let client = state.client else { return nil }
                state.rewinds.append(Rewind(offsets: offsets, milliseconds: milliseconds, waiter: continuation))
                return client
            }
            guard let client else {
                continuation.resume(returning: KafkaError.shutDown("rewind"))
                return
            }
            client.yield()
            intake.wake()
        }
    }

    /// Carries a rewind out (poll thread only): the messages of its partitions collected and not
    /// handed over are dropped (fetched before the move), librdkafka seeks (and, waiting for it,
    /// purges what it prefetched from the old positions), and ``ConsumerEvent/rewound(_:)`` marks
    /// the place in the events after which the partitions' messages come from the new positions.
    private func carryOut(_ rewind: Rewind, loop: inout PollLoop, client: RDKafkaClient) {
        let partitions = rewind.offsets.map { TopicPartition(topic: $0.topic, partition: $0.partition) }
        loop.drop(partitionsOf: Set(partitions))
        let failure = client.seek(rewind.offsets, milliseconds: rewind.milliseconds)
        events.yield(.rewound(partitions))
        rewind.waiter.resume(returning: failure)
    }

    /// Asks the poll thread to close; `waiter` resumes once the handle is destroyed.
    func requestClose(waiter: CheckedContinuation<Void, Never>?) {
        let outcome: (client: RDKafkaClient?, resumeNow: Bool) = state.withLock { state in
            switch state.phase {
            case .running:
                state.phase = .closing
                if let waiter { state.closeWaiters.append(waiter) }
                return (state.client, false)
            case .closing:
                if let waiter { state.closeWaiters.append(waiter) }
                return (nil, false)
            case .closed:
                return (nil, true)
            }
        }
        outcome.client?.yield()
        intake.wake()
        if outcome.resumeNow { waiter?.resume() }
    }

    /// Commits `offsets` with the result delivered to `waiter` through the consumer queue (never blocks).
    func commit(_ offsets: [TopicPartitionOffset], waiter: CommitWaiter) {
        guard !offsets.isEmpty else {
            waiter.complete(.success(()), logger: logger)
            return
        }
        guard let client else {
            waiter.complete(.failure(KafkaError.shutDown("commit")), logger: logger)
            return
        }
        let key = context.register(waiter)
        if let error = client.commit(offsets, key: key), let waiter = context.takeCommit(key) {
            waiter.complete(.failure(error), logger: logger)
        }
    }

    /// The poll thread's body.
    private func runPollThread() {
        let waiters = pollUntilClosed()
        // The handle is destroyed by now (this thread held its last reference).
        context.failOutstandingCommits()
        events.finish()
        for waiter in waiters { waiter.resume() }
    }

    /// Polls until asked to close, closes the consumer and drops the handle; returns the close waiters.
    private func pollUntilClosed() -> [CheckedContinuation<Void, Never>] {
        guard let client = state.withLock({ $0.client }) else { return [] }
        var loop = PollLoop(
            events: events, intake: intake, mode: mode, maxBatchSize: maxBatchSize,
            lender: lendsMessages ? PollLoop.Lender(client: client, loans: loans) : nil)
        var hold = LongHold(after: longHoldAfter)
        if case .reader(let topic) = mode {
            loop.unfinishedPartitions = assignFromBeginning(topic: topic, client: client)
        }
        while true {
            let (releases, rewinds, closing) = state.withLock { state -> ([[TopicPartition]], [Rewind], Bool) in
                let releases = state.releases
                let rewinds = state.rewinds
                state.releases = []
                state.rewinds = []
                if case .running = state.phase { return (releases, rewinds, false) }
                return (releases, rewinds, true)
            }
            for partitions in releases {
                client.unassign(partitions, context: context)
            }
            if closing {
                for rewind in rewinds { rewind.waiter.resume(returning: KafkaError.shutDown("rewind")) }
                break
            }
            for rewind in rewinds { carryOut(rewind, loop: &loop, client: client) }
            // Held (flow control), or a collected batch waiting for the reader to take the one
            // before (IntakeGate): poll nothing and hand nothing over until that ends; releases
            // and close are still served at the top of the loop. Either lasting long pauses the
            // assignment and polls on, so the member stays in its group and hears that its
            // partitions were lost (``LongHold``): a reader may wait long for something only a
            // live member can settle (an exactly-once worker waits for its transaction's commit).
            let isHeld = intake.waitWhileHeld(limit: 0.1)
            if isHeld || (loop.isReadyToHandOver && !intake.waitForReader(limit: 0.1)) {
                if hold.isLong(at: .now) {
                    let cause = isHeld ? "the intake is held" : "the reader has not taken the last batch"
                    keepMembership(during: &hold, cause: cause, loop: &loop, client: client)
                }
                continue
            }
            if hold.isUnderWay { endHold(&hold, client: client) }
            if loop.isReadyToHandOver {
                loop.flushBatch()
                continue
            }
            let message = client.consumerPoll(milliseconds: loop.isBatchEmpty ? 100 : 0)
            loop.deliver(context.takePending())
            if let message {
                if !loop.handle(message) { message.destroy() }
            } else {
                loop.queueIsEmpty = true
            }
        }
        // Closing: revocations during close are released at once by the rebalance callback.
        context.isClosing.store(true, ordering: .releasing)
        // Lent messages not handed over yet are not lent at all: nobody would process them now.
        loop.dropLent()
        loop.flushBatch()
        // librdkafka wants every message destroyed before its consumer closes: the lent batches
        // come back as the records in them finish (their outputs acknowledged), which the worker
        // waited for already; this bounds the wait should one be stuck.
        let stillLent = loans.waitForAll(limit: Self.loanReturnLimit)
        if stillLent > 0 {
            logger.warning(
                "closing the consumer with lent message batches not released; its handle is destroyed when they are",
                metadata: [KafkaLogKey.batches: "\(stillLent)"])
        }
        if let closeError = client.closeConsumer() {
            logger.warning("closing the consumer failed", metadata: [KafkaLogKey.error: "\(closeError)"])
        }
        loop.deliver(context.takePending())
        return state.withLock { state in
            let waiters = state.closeWaiters
            state.closeWaiters = []
            state.phase = .closed
            state.client = nil
            return waiters
        }
    }

    /// A hold (for `cause`) that lasted past ``longHoldAfter``: pauses every assigned partition
    /// not paused yet (partitions assigned during the hold included) and polls, so that
    /// `max.poll.interval.ms` never runs out and rebalances, lost partitions, errors and commit
    /// results are served. A paused partition fetches nothing; a message librdkafka still returns
    /// joins the batch, handed over when the intake restarts. An event served meanwhile goes out
    /// at once, after the batch collected before it (order kept), even while the reader has not
    /// taken the last batch. Poll thread only.
    private func keepMembership(during hold: inout LongHold, cause: String, loop: inout PollLoop, client: RDKafkaClient) {
        // Held partitions (``ConsumerContext/held``) stay paused: the hold's end must not resume them.
        let held = context.held.withLock { $0 }
        let unpaused = client.assignment().filter { !hold.paused.contains($0) && !held.contains($0) }
        if !unpaused.isEmpty {
            // A failure is ignored: polling goes on either way, and a partition left fetching
            // only adds messages to the batch.
            try? client.pause(unpaused)
            if hold.paused.isEmpty {
                logger.info(
                    "intake held for long: assigned partitions paused while the consumer keeps polling",
                    metadata: [KafkaLogKey.partitions: "\(unpaused.count)", KafkaLogKey.cause: "\(cause)"])
            }
            hold.paused.formUnion(unpaused)
        }
        let message = client.consumerPoll(milliseconds: 0)
        loop.deliver(context.takePending())
        if let message, !loop.handle(message) { message.destroy() }
    }

    /// The intake restarted: resumes what the long hold paused (those revoked meanwhile are not
    /// assigned any more, and librdkafka ignores them). Poll thread only.
    private func endHold(_ hold: inout LongHold, client: RDKafkaClient) {
        if !hold.paused.isEmpty {
            // A failure is ignored: partitions revoked meanwhile are not assigned any more.
            try? client.resume(Array(hold.paused))
        }
        hold = LongHold(after: hold.after)
    }

    /// Assigns every partition of `topic` from the beginning (a topic reader); retries metadata until
    /// the topic has partitions or close is requested. Returns the partitions assigned.
    private func assignFromBeginning(topic: String, client: RDKafkaClient) -> Set<TopicPartition> {
        while true {
            if case .running = state.withLock({ $0.phase }) {} else { return [] }
            switch partitionCount(of: topic) {
            case .success(let count) where count > 0:
                let partitions = (0..<count).map { TopicPartition(topic: topic, partition: $0) }
                let offsets = partitions.map { TopicPartitionOffset(topic: $0.topic, partition: $0.partition, offset: RDKafkaOffset.beginning) }
                guard let error = client.assign(offsets, failure: "assigning \(topic)") else { return Set(partitions) }
                events.yield(.error(error))
            case .success:
                events.yield(.error(KafkaError.unknownTopic("\(topic) has no partitions yet")))
            case .failure(let error):
                events.yield(.error(error))
            }
            // Metadata calls above wait up to their own time-out; pause briefly before asking again.
            client.poll(milliseconds: 500)
        }
    }

    /// The number of partitions of `topic` from a metadata request (blocks up to 5 s; poll thread only).
    private func partitionCount(of topic: String) -> Result<Int32, KafkaError> {
        guard let client = state.withLock({ $0.client }) else { return .failure(KafkaError.shutDown("metadata")) }
        switch client.describeTopic(topic, milliseconds: 5_000) {
        case .success(let count): return .success(count)
        case .failure(let error) where error.isUnknownTopic: return .success(0)
        case .failure(let error): return .failure(error)
        }
    }
}

/// The poll thread's batching state: messages collected from one poll cycle, handed over in order
/// with the callback events around them.
private struct PollLoop {
    /// The writing end of the event buffer.
    let events: AsyncStream<ConsumerEvent>.Continuation
    /// Told of every batch of messages handed over.
    let intake: IntakeGate
    /// What the consumer reads.
    let mode: ConsumerCore.Mode
    /// Most messages in one batch.
    let maxBatchSize: Int
    /// Copies messages.
    var decoder = MessageDecoder()
    /// Messages not yet handed over.
    var batch: [KafkaMessage] = []

    /// What a consumer that lends its messages needs to make batches of them.
    struct Lender {
        /// The handle's owner, which each batch keeps alive.
        let client: RDKafkaClient
        /// The consumer's count of lent batches.
        let loans: ConsumerLoans
    }

    /// Set when messages are lent rather than copied.
    let lender: Lender?
    /// Lent messages not yet handed over, and the index of each one's topic in ``lentTopicNames``.
    var lent: [RDKafkaMessage] = []
    var lentTopics: [UInt8] = []
    /// The topics of the lent messages not yet handed over, and their topic handles.
    var lentTopicNames: [String] = []
    var lentTopicHandles: [OpaquePointer?] = []
    /// Whether the last poll found nothing: librdkafka has no more messages right now.
    var queueIsEmpty = false
    /// Topic reader: partitions that have not reached their end yet (emptied once: then "caught up").
    var unfinishedPartitions: Set<TopicPartition> = []
    /// Whether "caught up" was reported.
    var caughtUpReported = false

    /// Creates the loop state.
    init(
        events: AsyncStream<ConsumerEvent>.Continuation, intake: IntakeGate, mode: ConsumerCore.Mode, maxBatchSize: Int,
        lender: Lender? = nil
    ) {
        self.events = events
        self.intake = intake
        self.mode = mode
        self.maxBatchSize = maxBatchSize
        self.lender = lender
    }

    /// How many messages wait to be handed over.
    private var collected: Int { batch.count + lent.count }
    /// Whether no messages are waiting to be handed over.
    var isBatchEmpty: Bool { collected == 0 }
    /// Whether the collected messages should go now: the batch is full, or librdkafka has no
    /// more right now.
    var isReadyToHandOver: Bool { collected > 0 && (collected >= maxBatchSize || queueIsEmpty) }

    /// Hands over the collected messages.
    mutating func flushBatch() {
        guard collected > 0 else { return }
        intake.handedOver()
        if let lender, !lent.isEmpty {
            events.yield(.lent(ConsumedBatch(messages: lent, topics: lentTopics, topicNames: lentTopicNames, client: lender.client, loans: lender.loans)))
            lent.removeAll(keepingCapacity: true)
            lentTopics.removeAll(keepingCapacity: true)
            lentTopicNames.removeAll(keepingCapacity: true)
            lentTopicHandles.removeAll(keepingCapacity: true)
        } else {
            events.yield(.messages(batch))
            batch = []
            batch.reserveCapacity(64)
        }
        queueIsEmpty = false
    }

    /// Drops the messages of `partitions` collected and not handed over yet (a rewind moves them:
    /// these were fetched from the old positions); lent ones are destroyed.
    mutating func drop(partitionsOf partitions: Set<TopicPartition>) {
        batch.removeAll { partitions.contains(TopicPartition(topic: $0.topic, partition: $0.partition)) }
        guard !lent.isEmpty else { return }
        var keptMessages: [RDKafkaMessage] = []
        var keptTopics: [UInt8] = []
        for (message, topic) in zip(lent, lentTopics) {
            if partitions.contains(TopicPartition(topic: lentTopicNames[Int(topic)], partition: message.partition)) {
                message.destroy()
            } else {
                keptMessages.append(message)
                keptTopics.append(topic)
            }
        }
        lent = keptMessages
        lentTopics = keptTopics
    }

    /// Destroys the lent messages not handed over yet (closing: nobody processes them now).
    mutating func dropLent() {
        for message in lent { message.destroy() }
        lent.removeAll()
        lentTopics.removeAll()
        lentTopicNames.removeAll()
        lentTopicHandles.removeAll()
    }

    /// Hands over callback events after the messages that preceded them.
    mutating func deliver(_ pending: [ConsumerContext.PendingEvent]) {
        guard !pending.isEmpty else { return }
        flushBatch()
        for event in pending {
            switch event {
            case .event(let event): events.yield(event)
            case .statistics(let json): events.yield(.statistics(ConsumerStatistics(json: json)))
            }
        }
    }

    /// Takes one polled message: a record joins the batch; an error (or a reader's partition end) is handed over in order.
    /// - Returns: whether the message was lent (the batch destroys it); when not, the caller must.
    mutating func handle(_ message: RDKafkaMessage) -> Bool {
        let status = message.status
        if status == .record {
            queueIsEmpty = false
            if lender != nil {
                lend(message)
                return true
            }
            batch.append(decoder.decode(message))
            return false
        }
        if status == .partitionEnd, case .reader = mode {
            let partition = TopicPartition(topic: decoder.topicName(message.topicHandle), partition: message.partition)
            unfinishedPartitions.remove(partition)
            if unfinishedPartitions.isEmpty, !caughtUpReported {
                caughtUpReported = true
                flushBatch()
                events.yield(.caughtUp)
            }
            return false
        }
        flushBatch()
        events.yield(.error(message.error()))
        return false
    }

    /// Adds a message to the lent batch, with its topic (a batch holds at most 256 topics: the
    /// batch is handed over before a 257th).
    private mutating func lend(_ message: RDKafkaMessage) {
        let handle = message.topicHandle
        var topic = lentTopicHandles.firstIndex { $0 == handle }
        if topic == nil {
            if lentTopicHandles.count == Int(UInt8.max) + 1 { flushBatch() }
            lentTopicHandles.append(handle)
            lentTopicNames.append(decoder.topicName(handle))
            topic = lentTopicHandles.count - 1
        }
        lent.append(message)
        lentTopics.append(UInt8(topic!))
    }
}

/// How long the intake has been held, and what the poll thread paused to keep polling meanwhile.
///
/// The intake is held by its owner (flow control) or by a reader that has not taken the last batch
/// yet (``IntakeGate``). Not polling while held keeps librdkafka's prefetched messages (restarting
/// takes them at once), so short holds do just that. But a member that does not call
/// `rd_kafka_consumer_poll` for `max.poll.interval.ms` leaves its group, and its partitions go to
/// another member while its records are in flight; nor does it hear of partitions it lost, which
/// are served through polling. A hold that lasts (output retries through a broker outage,
/// extensions at their deadline, an exactly-once worker waiting for a commit from a coordinator it
/// cannot reach) therefore pauses the assignment and polls on: pausing drops the prefetched
/// messages, which are fetched again after the hold, a small price once in a long while.
struct LongHold {
    /// How long a hold lasts before it counts as long; nil: never (topic readers).
    let after: Duration?
    /// When the current hold was first seen.
    private var since: ContinuousClock.Instant?
    /// Whether a hold is under way (`since` is set). The poll thread asks once per message it
    /// polls: reading an optional of `ContinuousClock.Instant`, a resilient type of the standard
    /// library, goes through its value witnesses, looked up at run time.
    private(set) var isUnderWay = false
    /// The partitions the poll thread paused during this hold.
    var paused: Set<TopicPartition> = []

    /// Creates the state of no hold.
    init(after: Duration?) {
        self.after = after
    }

    /// Notes that the intake is held at `now`; whether it has been held for long.
    mutating func isLong(at now: ContinuousClock.Instant) -> Bool {
        guard let after else { return false }
        let since = self.since ?? now
        self.since = since
        isUnderWay = true
        return now - since >= after
    }
}
