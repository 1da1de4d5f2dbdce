import Synchronization

/// The delivery reports of one ``KafkaProducer/send(_:)-(Array<ProducerRecord>)`` call: one slot per record,
/// completed by the delivery-report callback; the sender is resumed once, after the last one.
final class BatchDelivery: @unchecked Sendable {
    // @unchecked Sendable: each outcome is written once (by the poll thread's callback for accepted
    // records, by the sender for rejected ones) and read only after `remaining` reached zero, whose
    // acquiring-and-releasing updates order those writes before the read.

    /// The batch's number among the producer's open batches (``PendingDeliveries``).
    let number: UInt64
    /// Where the batch is registered until its last record has its outcome.
    private let registry: PendingDeliveries
    /// The outcome per record, nil until known.
    private let outcomes: UnsafeMutableBufferPointer<DeliveryOutcome?>
    /// Records without an outcome, plus one held by the sender until it waits.
    private let remaining: Atomic<Int>
    /// The waiting sender.
    private let waiter = Mutex<UnsafeContinuation<Void, Never>?>(nil)

    /// Creates the slots for `count` records; call through ``PendingDeliveries/open(count:)``.
    init(number: UInt64, count: Int, registry: PendingDeliveries) {
        precondition(count < 1 << DeliveryID.indexBits, "a batch holds fewer than 2^32 records")
        self.number = number
        self.registry = registry
        outcomes = .allocate(capacity: count)
        outcomes.initialize(repeating: nil)
        remaining = Atomic(count + 1)
    }

    deinit {
        outcomes.deinitialize()
        outcomes.deallocate()
    }

    /// The message opaque of record `index`: its delivery id, an integer the callback hands back.
    func messageOpaque(_ index: Int) -> UnsafeMutableRawPointer {
        DeliveryID(batch: number, index: index).messageOpaque
    }

    /// Records one outcome; the last one closes the batch and resumes the sender.
    func complete(_ index: Int, _ outcome: DeliveryOutcome) {
        outcomes[index] = outcome
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { finish() }
    }

    /// The slots from `used` on will have no record (a batch opened for more records than it got):
    /// they count as done, so the wait ends with the last record's outcome.
    func closeUnused(from used: Int) {
        let unused = outcomes.count - used
        guard unused > 0 else { return }
        if remaining.subtract(unused, ordering: .acquiringAndReleasing).newValue == 0 { finish() }
    }

    /// The outcome of record `index`, nil when it has none (after ``waitForAll()``).
    func outcome(_ index: Int) -> DeliveryOutcome? {
        outcomes[index]
    }

    /// Suspends until every record has its outcome (call once, after the last enqueue).
    func waitForAll() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            waiter.withLock { $0 = continuation }
            if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { finish() }
        }
    }

    /// Every record has its outcome and the sender waits: no report can name the batch any more.
    private func finish() {
        registry.close(number)
        waiter.withLock { $0.take() }?.resume()
    }

    /// The outcomes, in record order (after ``waitForAll()``).
    func results(topics records: [ProducerRecord]) -> [Result<DeliveryReport, KafkaError>] {
        records.indices.map { index in
            switch outcomes[index] {
            case .delivered(let partition, let offset):
                .success(DeliveryReport(topic: records[index].topic, partition: partition, offset: offset))
            case .rejected(let error):
                .failure(error.refusedLocally)
            case .failed(let error):
                .failure(error)
            case nil:
                .failure(KafkaError.shutDown("send"))
            }
        }
    }
}

/// A record's delivery id: its batch's number and its index in the batch, carried as the
/// record's message opaque (an integer in the pointer's bits, never dereferenced) and handed back
/// by librdkafka with the delivery report. swift-kafka-client's approach: no address of ours goes
/// through C, so a stray or late report can find nothing rather than memory that was freed.
struct DeliveryID: Equatable {
    /// The bits of the index; the batch number has the rest.
    static let indexBits: UInt64 = 32

    /// The batch's number, 1 to 2^32 - 1 (never 0, so no id is a null opaque), wrapping: a batch
    /// is open for seconds, billions of batches apart from the next one of its number.
    var batch: UInt64
    /// The record's index in its batch.
    var index: Int

    init(batch: UInt64, index: Int) {
        self.batch = batch
        self.index = index
    }

    /// The id a message opaque carries.
    init(messageOpaque: UnsafeMutableRawPointer) {
        let bits = UInt64(UInt(bitPattern: messageOpaque))
        batch = bits >> Self.indexBits
        index = Int(bits & (1 << Self.indexBits - 1))
    }

    /// The id as a message opaque.
    var messageOpaque: UnsafeMutableRawPointer {
        // Never null: batch numbers start at 1.
        UnsafeMutableRawPointer(bitPattern: UInt(batch << Self.indexBits | UInt64(index)))!
    }
}

/// A producer's batches awaiting delivery reports, by number: the delivery-report callback finds
/// a record's batch from the id in its message opaque.
///
/// The callback runs on whichever thread serves the producer's queue: its poll thread, and also
/// a thread committing a transaction (`rd_kafka_commit_transaction` flushes, and a flush serves
/// delivery reports), so the lookup takes the lock: uncontended, one per report.
final class PendingDeliveries: Sendable {
    /// The next batch number and the batches not yet closed.
    private let batches = Mutex<(next: UInt64, open: [UInt64: BatchDelivery])>((1, [:]))

    /// Registers a batch of `count` records; it stays open until its last outcome.
    func open(count: Int) -> BatchDelivery {
        batches.withLock { batches in
            let batch = BatchDelivery(number: batches.next, count: count, registry: self)
            batches.open[batch.number] = batch
            batches.next = batches.next == UInt64(UInt32.max) ? 1 : batches.next + 1
            return batch
        }
    }

    /// Forgets a batch whose records all have their outcome.
    func close(_ number: UInt64) {
        _ = batches.withLock { $0.open.removeValue(forKey: number) }
    }

    /// Completes the record a delivery report names (on the poll thread). A report whose batch is
    /// closed or unknown is ignored: librdkafka reports each accepted record once, so none is.
    func complete(_ id: DeliveryID, _ outcome: DeliveryOutcome) {
        batches.withLock { $0.open[id.batch] }?.complete(id.index, outcome)
    }
}
