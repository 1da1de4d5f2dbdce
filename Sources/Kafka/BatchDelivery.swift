import Synchronization

/// The delivery reports of one ``KafkaProducer/send(_:)-(Array<ProducerRecord>)`` call: one slot per record,
/// completed by the delivery-report callback; the sender is resumed once, after the last one.
final class BatchDelivery: @unchecked Sendable {
    // @unchecked Sendable: each outcome is written once (by the poll thread's callback for accepted
    // records, by the sender for rejected ones) and read only after `remaining` reached zero, whose
    // acquiring-and-releasing updates order those writes before the read.

    /// One record's place in the batch; its (tagged) address is the record's message opaque.
    struct Slot {
        /// The batch; kept alive by the sender, which awaits every report.
        unowned(unsafe) let batch: BatchDelivery
        /// The record's index in the batch.
        let index: Int
    }

    /// The outcome per record, nil until known.
    private let outcomes: UnsafeMutableBufferPointer<DeliveryOutcome?>
    /// Stable slot addresses for the message opaques.
    private let slots: UnsafeMutableBufferPointer<Slot>
    /// Records without an outcome, plus one held by the sender until it waits.
    private let remaining: Atomic<Int>
    /// The waiting sender.
    private let waiter = Mutex<UnsafeContinuation<Void, Never>?>(nil)

    /// Creates the slots for `count` records.
    init(count: Int) {
        outcomes = .allocate(capacity: count)
        outcomes.initialize(repeating: nil)
        slots = .allocate(capacity: count)
        remaining = Atomic(count + 1)
        for index in 0..<count {
            (slots.baseAddress! + index).initialize(to: Slot(batch: self, index: index))
        }
    }

    deinit {
        outcomes.deinitialize()
        outcomes.deallocate()
        slots.deinitialize()
        slots.deallocate()
    }

    /// The message opaque of record `index`: its slot address with the low bit set, which tells the
    /// callback it is a batch slot rather than a single `send`'s continuation (a task address, never odd).
    func messageOpaque(_ index: Int) -> UnsafeMutableRawPointer {
        // Slots are at least 8-byte aligned, so the low bit is free for the tag.
        UnsafeMutableRawPointer(bitPattern: UInt(bitPattern: slots.baseAddress! + index) | 1)!
    }

    /// The batch slot a tagged message opaque points to, or nil when the opaque is a single `send`'s.
    static func slot(fromMessageOpaque opaque: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Slot>? {
        let bits = UInt(bitPattern: opaque)
        guard bits & 1 == 1 else { return nil }
        return UnsafeMutablePointer(bitPattern: bits & ~1)
    }

    /// Records one outcome; the last one resumes the sender.
    func complete(_ index: Int, _ outcome: DeliveryOutcome) {
        outcomes[index] = outcome
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            waiter.withLock { $0.take() }?.resume()
        }
    }

    /// Suspends until every record has its outcome (call once, after the last enqueue).
    func waitForAll() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            waiter.withLock { $0 = continuation }
            if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
                waiter.withLock { $0.take() }?.resume()
            }
        }
    }

    /// The outcomes, in record order (after ``waitForAll()``).
    func results(topics records: [ProducerRecord]) -> [Result<DeliveryReport, KafkaError>] {
        records.indices.map { index in
            switch outcomes[index] {
            case .delivered(let partition, let offset):
                .success(DeliveryReport(topic: records[index].topic, partition: partition, offset: offset))
            case .rejected(let error), .failed(let error):
                .failure(error)
            case nil:
                .failure(KafkaError.shutDown("send"))
            }
        }
    }
}
