/// The events of one ``KafkaConsumer`` or ``KafkaTopicReader``, in order; ends after its
/// `close()`.
///
/// Fed by the client's poll thread, which hands a batch of messages over only once the previous
/// one was read (``IntakeGate``): what waits here is at most one batch and the events around it.
/// Iterate it from one task only.
public struct KafkaConsumerEvents: AsyncSequence, Sendable {
    /// Each element is one event.
    public typealias Element = ConsumerEvent
    /// Iteration never throws; errors arrive as ``ConsumerEvent/error(_:)``.
    public typealias Failure = Never

    /// The buffer between the poll thread and the reader.
    let stream: AsyncStream<ConsumerEvent>
    /// Told when the reader takes a batch of messages.
    let intake: IntakeGate

    /// Returns the iterator (only one may be used).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), intake: intake)
    }

    /// Iterates the events.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// The buffer's iterator.
        var base: AsyncStream<ConsumerEvent>.AsyncIterator
        /// Told when a batch of messages is taken, which lets the poll thread hand over the next.
        let intake: IntakeGate

        /// The next event, or nil once the client is closed.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> ConsumerEvent? {
            let event = await base.next(isolation: actor)
            switch event {
            case .messages, .lent: intake.taken()
            default: break
            }
            return event
        }

        /// The next event, or nil once the client is closed.
        public mutating func next() async -> ConsumerEvent? {
            await next(isolation: nil)
        }
    }
}
