public import Records
/// What a ``KafkaConsumer`` or a ``KafkaTopicReader`` reports, in the order it happened.
///
/// One type for both: a topic reader is a consumer without a group, so it reports messages,
/// errors and, once, ``caughtUp``; never a rebalance or statistics. A group consumer never
/// reports ``caughtUp``.
public enum ConsumerEvent: Sendable {
    /// Messages from one poll cycle (several partitions possible; per partition in offset order).
    case messages([KafkaMessage])
    /// Messages from one poll cycle, lent in place (a consumer with
    /// ``ConsumerConfiguration/lendsMessages``): read them from the batch, and release it (drop
    /// every reference) once done, so that librdkafka gets them back.
    case lent(ConsumedBatch)
    /// Partitions newly assigned; already incrementally assigned when the event is seen.
    case assigned([TopicPartition])
    /// Partitions being revoked: still owned until ``KafkaConsumer/releaseRevoked(_:)`` is called for them.
    ///
    /// While a revocation is pending, librdkafka holds back fetching for the whole assignment (polling,
    /// heartbeats and commits go on); it fetches again once the partitions are released, so release promptly.
    case revoked([TopicPartition])
    /// Partitions lost (session timed out, or the consumer is closing): already gone; do not commit for them.
    case lost([TopicPartition])
    /// Periodic client statistics (`statistics.interval.ms`).
    case statistics(ConsumerStatistics)
    /// An error librdkafka reported (most are transient and recovered from by librdkafka itself; check ``KafkaError/isFatal``).
    case error(KafkaError)
    /// A topic reader only: every partition it reads has reached the end it had when the reader
    /// started (reported once).
    case caughtUp
    /// ``KafkaConsumer/rewind(_:timeout:)`` moved these partitions: the messages of theirs
    /// reported before this event were fetched before the move, those after it from the new
    /// position.
    case rewound([TopicPartition])
}
