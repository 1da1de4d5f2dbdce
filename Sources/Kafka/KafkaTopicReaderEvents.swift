/// The events of one ``KafkaTopicReader``, in order; ends after ``KafkaTopicReader/close()``.
///
/// Fed by the reader's poll thread, one batch of messages at a time (``KafkaConsumerEvents``).
/// Iterate it from one task only.
package struct KafkaTopicReaderEvents: AsyncSequence, Sendable {
    /// Each element is one event.
    package typealias Element = TopicReaderEvent
    /// Iteration never throws; errors arrive as ``TopicReaderEvent/error(_:)``.
    package typealias Failure = Never

    /// The poll thread's hand-off buffer.
    let source: PollEventSource

    /// Returns the iterator (only one may be used).
    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: source.makeIterator())
    }

    /// Iterates the events.
    package struct AsyncIterator: AsyncIteratorProtocol {
        /// The buffer's iterator.
        var base: PollEventIterator

        /// The next event, or nil once the reader is closed.
        package mutating func next(isolation actor: isolated (any Actor)?) async -> TopicReaderEvent? {
            while let event = await base.next(isolation: actor) {
                switch event {
                case .caughtUp: return .caughtUp
                case .consumer(.messages(let messages)): return .messages(messages)
                case .consumer(.error(let error)): return .error(error)
                case .consumer: continue  // no group: no rebalances; statistics are not surfaced here
                }
            }
            return nil
        }

        /// The next event, or nil once the reader is closed.
        package mutating func next() async -> TopicReaderEvent? {
            await next(isolation: nil)
        }
    }
}
