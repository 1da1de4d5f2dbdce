/// The events of one ``KafkaConsumer``, in order; ends after ``KafkaConsumer/close()``.
///
/// Fed by the consumer's poll thread, which hands a batch of messages over only once the previous
/// one was read: what waits here is at most one batch and the events around it. Iterate it from one
/// task only.
public struct KafkaConsumerEvents: AsyncSequence, Sendable {
    /// Each element is one event.
    public typealias Element = ConsumerEvent
    /// Iteration never throws; errors arrive as ``ConsumerEvent/error(_:)``.
    public typealias Failure = Never

    /// The poll thread's hand-off buffer.
    let source: PollEventSource

    /// Returns the iterator (only one may be used).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: source.makeIterator())
    }

    /// Iterates the events.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// The buffer's iterator.
        var base: PollEventIterator

        /// The next event, or nil once the consumer is closed.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> ConsumerEvent? {
            while let event = await base.next(isolation: actor) {
                if case .consumer(let event) = event { return event }
            }
            return nil
        }

        /// The next event, or nil once the consumer is closed.
        public mutating func next() async -> ConsumerEvent? {
            await next(isolation: nil)
        }
    }
}
