package import Records
import Synchronization

/// A producer's handle on one topic, made once (``KafkaProducer/topic(named:)``) so that producing
/// to it finds no topic by name: the in-place path hands librdkafka the handle itself.
package struct ProducerTopic: @unchecked Sendable, Equatable {
    // @unchecked Sendable: librdkafka's topic handles may be used from any thread; this one lives
    // as long as its producer, and is used only while the producer takes records.

    /// librdkafka's topic handle, owned by the producer's ``RDKafkaTopicHandles`` (destroyed when it stops).
    let handle: OpaquePointer
    /// The topic's name.
    package let name: String
}

/// What became of one record handed to ``LentOutputs/produce(to:partition:key:value:headers:)``.
package enum LentProduce: Sendable {
    /// librdkafka took it (a copy): its outcome arrives in the batch's slot.
    case enqueued(slot: Int)
    /// librdkafka's local queue is full: wait for room (``LentOutputs/waitForQueueSpace()``) and
    /// produce it again.
    case queueFull
    /// Refused at once (no delivery report will come), or the producer stopped taking records.
    case refused(KafkaError)
}

/// Outputs produced straight from bytes lent for the call (the worker's in-place path): librdkafka
/// copies each record as it is produced, and the delivery reports of all of them are awaited once
/// (``waitForAll()``).
///
/// Produce from one task at a time; then ``close()`` the batch (no more records) and await it.
/// Each enqueued record has a slot, whose outcome ``outcome(ofSlot:)`` reads after the wait.
package final class LentOutputs: Sendable {
    /// The delivery reports' slots.
    private let delivery: BatchDelivery
    /// The producer.
    private let core: ProducerCore
    /// Records enqueued so far (written by ``produce(to:partition:key:value:headers:)``, under the producer's lock).
    private let produced = Atomic<Int>(0)
    /// The most records the batch takes.
    package let capacity: Int

    init(capacity: Int, core: ProducerCore, deliveries: PendingDeliveries) {
        self.capacity = capacity
        self.core = core
        delivery = deliveries.open(count: capacity)
    }

    /// Produces one record, its key, value and headers copied by librdkafka during the call.
    /// - Parameters:
    ///   - partition: nil lets the partitioner choose by key.
    ///   - key: nil is Kafka's null key.
    ///   - value: nil is a tombstone.
    package func produce(
        to topic: ProducerTopic, partition: Int32?, key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer?,
        headers: UnsafeBufferPointer<LentHeader>
    ) -> LentProduce {
        core.withClientIfRunning { client -> LentProduce in
            guard let client else { return .refused(KafkaError.shutDown("produce")) }
            let slot = produced.load(ordering: .relaxed)
            precondition(slot < capacity, "more outputs than the batch was opened for")
            let error = client.produce(
                topic: topic, partition: partition, key: key, value: value, headers: headers, opaque: delivery.messageOpaque(slot))
            guard let error else {
                // Written under the producer's lock, by the batch's one producing task.
                produced.store(slot + 1, ordering: .relaxed)
                return .enqueued(slot: slot)
            }
            return error.isLocalQueueFull ? .queueFull : .refused(error)
        }
    }

    /// Suspends until the producer has served delivery reports (room may have been freed in its
    /// local queue) or stopped.
    package func waitForQueueSpace() async {
        await core.waitForQueueSpace()
    }

    /// No more records: the slots not used are closed, so that ``waitForAll()`` returns once the
    /// records enqueued have their outcomes.
    package func close() {
        delivery.closeUnused(from: produced.load(ordering: .relaxed))
    }

    /// Suspends until every enqueued record has its outcome (call once, after ``close()``).
    package func waitForAll() async {
        await delivery.waitForAll()
    }

    /// The outcome of the record in `slot` (after ``waitForAll()``): acknowledged, or why not.
    package func outcome(ofSlot slot: Int) -> Result<Void, KafkaError> {
        switch delivery.outcome(slot) {
        case .delivered: .success(())
        case .rejected(let error), .failed(let error): .failure(error)
        case nil: .failure(KafkaError.shutDown("send"))
        }
    }
}

extension KafkaProducer {
    /// Opens a batch of at most `capacity` outputs to produce from lent bytes.
    package func openLentOutputs(capacity: Int) -> LentOutputs {
        LentOutputs(capacity: max(capacity, 1), core: core, deliveries: context.deliveries)
    }

    /// The producer's handle on `name`, made on first use and kept while the producer lives;
    /// nil once it stopped.
    package func topic(named name: String) -> ProducerTopic? {
        core.topic(named: name)
    }
}
