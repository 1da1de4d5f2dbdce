/// The events of one ``KafkaConsumer``, in order; ends after ``KafkaConsumer/close()``.
///
/// Fed by the consumer's poll thread through an unbounded buffer: the poll thread never waits for
/// the reader. Memory stays bounded because the caller pauses partitions it cannot keep up with.
/// Iterate it from one task only.
public struct KafkaConsumerEvents: AsyncSequence, Sendable {
    /// Each element is one event.
    public typealias Element = ConsumerEvent
    /// Iteration never throws; errors arrive as ``ConsumerEvent/error(_:)``.
    public typealias Failure = Never

    /// The buffer between the poll thread and the reader.
    let stream: AsyncStream<PollEvent>

    /// Returns the iterator (only one may be used).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator())
    }

    /// Iterates the events.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// The buffer's iterator.
        var base: AsyncStream<PollEvent>.AsyncIterator

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

/// What the poll thread hands over: a consumer event, or a topic reader's "caught up" signal.
enum PollEvent: Sendable {
    /// A consumer event.
    case consumer(ConsumerEvent)
    /// Every partition of a topic reader has reached its end once.
    case caughtUp
}
