/// The reading end of a poll thread's hand-off buffer, shared by ``KafkaConsumerEvents`` and
/// ``KafkaTopicReaderEvents``: reports each batch of messages taken to the intake gate, which
/// lets the poll thread hand over the next one (``IntakeGate``).
struct PollEventSource: Sendable {
    /// The buffer between the poll thread and the reader.
    let stream: AsyncStream<PollEvent>
    /// Told when the reader takes a batch of messages.
    let intake: IntakeGate

    /// Returns the iterator (only one may be used).
    func makeIterator() -> PollEventIterator {
        PollEventIterator(base: stream.makeAsyncIterator(), intake: intake)
    }
}

/// Iterates a ``PollEventSource``.
struct PollEventIterator {
    /// The buffer's iterator.
    var base: AsyncStream<PollEvent>.AsyncIterator
    /// Told when a batch of messages is taken.
    let intake: IntakeGate

    /// The next event, or nil once the poll thread has finished.
    mutating func next(isolation actor: isolated (any Actor)?) async -> PollEvent? {
        let event = await base.next(isolation: actor)
        if case .consumer(.messages) = event { intake.taken() }
        return event
    }
}

/// What the poll thread hands over: a consumer event, or a topic reader's "caught up" signal.
enum PollEvent: Sendable {
    /// A consumer event.
    case consumer(ConsumerEvent)
    /// Every partition of a topic reader has reached its end once.
    case caughtUp
}
